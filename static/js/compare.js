// The compare form: as a name is typed, offer the names the person may read that contain it.
"use strict";
(function () {
  const form = document.querySelector("form.compare");
  if (!form) return;
  const url = form.dataset.namesUrl;
  for (const input of form.querySelectorAll("input[list]")) {
    const list = document.getElementById(input.getAttribute("list"));
    let timer = null;
    let asked = "";
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const text = input.value.trim();
        if (!text || text === asked) return;
        asked = text;
        fetch(url + "?" + new URLSearchParams({ q: text }), { credentials: "same-origin" })
          .then((response) => (response.ok ? response.json() : { names: [] }))
          .then((data) => {
            list.replaceChildren(
              ...data.names.map((name) => {
                const option = document.createElement("option");
                option.value = name;
                return option;
              }),
            );
          })
          .catch(() => list.replaceChildren()); // no suggestions: the form still works typed
      }, 200);
    });
  }
})();
