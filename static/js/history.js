// A node's history: usage, and its standing (tree usage against target, factor or Level FS),
// with decays, usage resets and share changes marked; a range selector reloads it.
"use strict";
(function () {
  const box = document.getElementById("history");
  if (!box) return;
  const slurm = box.dataset.slurm === "1";

  function marks(events) {
    return events.map((event) => ({
      type: "line",
      xref: "x",
      yref: "paper",
      x0: event.at,
      x1: event.at,
      y0: 0,
      y1: 1,
      line: { width: 1, dash: "dot", color: event.kind === "decay" ? "#8d99ae" : "#e63946" },
    }));
  }

  function draw(data) {
    const empty = data.at.length === 0;
    document.getElementById("history-empty").hidden = !empty;
    const layout = (title) => ({
      title: { text: title },
      height: 260,
      margin: { t: 40, l: 60, r: 20, b: 40 },
      shapes: marks(data.events),
      hovermode: "x unified",
    });
    const line = (name, values) => ({ type: "scatter", mode: "lines", name, x: data.at, y: values });
    const usageLayout = layout("Usage");
    usageLayout.yaxis = { title: { text: box.dataset.unit } };
    Plotly.react("history-usage", [line("usage", data.usage)], usageLayout, { displaylogo: false });
    const standing = slurm
      ? [line("Level FS", data.level_fs.map((v) => (v === "inf" ? null : v))), line("FairShare", data.fairshare_factor)]
      : [
          line("tree usage", data.fairshare_tree_usage),
          line("target", data.fairshare_perc),
          line("factor (0.5 = on target)", data.fairshare_factor),
        ];
    Plotly.react("history-standing", standing, layout("Standing"), { displaylogo: false });
  }

  function load(span) {
    box.querySelectorAll("button[data-range]").forEach((button) => {
      button.setAttribute("aria-pressed", String(button.dataset.range === span));
    });
    const failed = document.getElementById("history-error");
    fetch(box.dataset.url + "?range=" + encodeURIComponent(span), { credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(response.status + " " + response.statusText);
        return response.json();
      })
      .then((data) => {
        failed.hidden = true;
        draw(data);
      })
      .catch((error) => {
        failed.textContent = "The history could not be read (" + error.message + "): try again.";
        failed.hidden = false;
      });
  }

  box.querySelectorAll("button[data-range]").forEach((button) => {
    button.addEventListener("click", () => load(button.dataset.range));
  });
  window.addEventListener("load", () => load("30d"));
})();
