// Tabs (WAI-ARIA's tab pattern): one panel shows at a time; arrows move between tabs. A panel
// with a data-url fills its <pre> from that text the first time it opens.
"use strict";
(function () {
  for (const list of document.querySelectorAll("[role=tablist]")) {
    const tabs = Array.from(list.querySelectorAll("[role=tab]"));
    const select = (chosen) => {
      for (const tab of tabs) {
        const on = tab === chosen;
        tab.setAttribute("aria-selected", on ? "true" : "false");
        tab.tabIndex = on ? 0 : -1;
        const panel = document.getElementById(tab.getAttribute("aria-controls"));
        panel.hidden = !on;
        if (on && panel.dataset.url && !panel.dataset.loaded) load(panel);
      }
      // Plotly sizes a chart drawn while hidden to nothing: let it measure again.
      window.dispatchEvent(new Event("resize"));
    };
    tabs.forEach((tab, index) => {
      tab.addEventListener("click", () => select(tab));
      tab.addEventListener("keydown", (event) => {
        const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
        if (!step) return;
        const next = tabs[(index + step + tabs.length) % tabs.length];
        select(next);
        next.focus();
      });
    });
  }

  function load(panel) {
    const status = panel.querySelector(".listing-status");
    const text = panel.querySelector("pre");
    panel.dataset.loaded = "1";
    fetch(panel.dataset.url, { credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        return response.text();
      })
      .then((body) => {
        text.textContent = body;
        text.hidden = false;
        status.hidden = true;
      })
      .catch((error) => {
        delete panel.dataset.loaded;
        status.textContent = "Could not load the listing: " + error.message + ". Open the tab again to retry.";
        status.classList.add("error");
      });
  }
})();
