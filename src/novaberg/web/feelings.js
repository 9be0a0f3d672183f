// Emotions in words: the canon's ids (German data values with ASCII umlauts, such as
// "ueberrascht" or "aerger") as the page says them — a noun for the wheel's axes ("Überraschung",
// "surprise"), an adjective for sentences ("überrascht", "surprised"), and the mood's
// direction ("absturz" → "stürzt ab"). An id outside the catalogue is shown with spaces for
// underscores, never as a key (docs/behaviour/web.md#the-side-panels).
"use strict";

import { LANGUAGES, t } from "./i18n.js";

const known = (key) => key in LANGUAGES.de;
const plain = (id) => String(id).replaceAll("_", " ");

/** The emotion as a noun: "Neugier" / "curiosity". */
export const emotionName = (id) =>
  known(`panels.emotion.${id}`) ? t(`panels.emotion.${id}`) : plain(id);

/** The emotion as an adjective for "Nova ist gerade …": "neugierig" / "curious". */
export const feeling = (id) =>
  known(`panels.feeling.${id}`) ? t(`panels.feeling.${id}`) : plain(id);

/** A mood's direction over the last turns in words ("plateau" → "gleichbleibend"). */
export const direction = (id) =>
  known(`panels.direction.${id}`) ? t(`panels.direction.${id}`) : plain(id);
