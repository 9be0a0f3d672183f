// The settings panel: time zone and the model in use (GET /page/settings), and the banner
// shown while the bundled demo model answers.
"use strict";

import { get } from "./api.js";

export async function load(panel, banner) {
  const s = await get("/page/settings");
  panel.querySelector("[data-role=timezone]").textContent = s.zeitzone;
  panel.querySelector("[data-role=model]").textContent = `${s.modell} (${s.backend})`;
  banner.hidden = !s.demo_modell;
  banner.querySelector("code").textContent = s.demo_hinweis;
  return s;
}
