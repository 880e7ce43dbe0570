// The share editing form: "Add a row" appends a blank row for a new child (Django's empty
// form, its __prefix__ replaced by the next index) and counts it in the management form.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("edit-add-row");
  const template = document.getElementById("edit-row-template");
  const rows = document.getElementById("edit-rows");
  const total = document.querySelector("input[name$='-TOTAL_FORMS']");
  if (!button || !template || !rows || !total) return;
  button.addEventListener("click", () => {
    const index = Number(total.value);
    const html = template.innerHTML.replaceAll("__prefix__", String(index));
    rows.insertAdjacentHTML("beforeend", html);
    total.value = String(index + 1);
    const name = rows.lastElementChild.querySelector("input[name$='-name']");
    const parent = rows.lastElementChild.querySelector("input[name$='-parent']");
    if (parent && !parent.value) parent.value = rows.dataset.here || "";
    if (name) name.focus();
  });
});
