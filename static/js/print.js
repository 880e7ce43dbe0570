// Printed, a page shows what its closed "What the numbers mean" holds: open them for the print.
"use strict";
window.addEventListener("beforeprint", () => {
  for (const details of document.querySelectorAll("details.legend")) details.open = true;
});
