// The "Details" switch of a side panel: the panel speaks in sentences, the raw figures (ids,
// percentages, the node table) show only while the switch is on. The state is the panel's
// `data-details` attribute ("on"/"off"), so CSS and tests read it in one place.
"use strict";

import { onLanguageChange, t } from "./i18n.js";

/** Put the switch after the panel's heading; `changed(on)` redraws the panel. */
export function detailsSwitch(panel, changed) {
  const btn = document.createElement("button");
  btn.type = "button";
  btn.className = "small details-switch";
  btn.dataset.testid = "details-switch";
  btn.setAttribute("aria-pressed", "false");
  const label = () => { btn.textContent = t("panels.details"); };
  label();
  onLanguageChange(label);
  panel.dataset.details = "off";
  btn.addEventListener("click", () => {
    const on = btn.getAttribute("aria-pressed") !== "true";
    btn.setAttribute("aria-pressed", String(on));
    panel.dataset.details = on ? "on" : "off";
    changed(on);
  });
  const heading = panel.querySelector("h2");
  if (heading) heading.after(btn);
  else panel.prepend(btn);
  return btn;
}

/** Whether the panel's details are shown. */
export const detailsShown = (panel) => Boolean(panel) && panel.dataset.details === "on";
