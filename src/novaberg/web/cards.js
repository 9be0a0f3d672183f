// Character cards (PNG or JSON) imported by dropping them on the page or choosing them in
// the picker's file field (POST /characters); the new character is then selected.
"use strict";

import { upload } from "./api.js";

export function mount(dropTarget, input, status, onImported) {
  async function importFile(file) {
    status.textContent = `importiere ${file.name} …`;
    try {
      const report = await upload("/characters", file);
      status.textContent = `${report.name} ${report.neu ? "importiert" : "war schon da"}`;
      await onImported(report.character_id);
    } catch (err) {
      status.textContent = `nicht importiert: ${err.message}`;
    }
  }
  input.addEventListener("change", () => {
    if (input.files.length) importFile(input.files[0]);
    input.value = "";
  });
  dropTarget.addEventListener("dragover", (ev) => {
    if ([...ev.dataTransfer.types].includes("Files")) {
      ev.preventDefault();
      dropTarget.classList.add("dropping");
    }
  });
  dropTarget.addEventListener("dragleave", () => dropTarget.classList.remove("dropping"));
  dropTarget.addEventListener("drop", (ev) => {
    dropTarget.classList.remove("dropping");
    const file = ev.dataTransfer.files[0];
    if (!file) return;
    ev.preventDefault();
    importFile(file);
  });
}
