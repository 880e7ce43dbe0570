// A node's history: usage, and its standing (tree usage against target, factor or Level FS),
// with decays, usage resets and share changes marked; a range selector reloads it.
"use strict";
(function () {
  const box = document.getElementById("history");
  if (!box) return;
  const slurm = box.dataset.slurm === "1";
  const accelerator = box.dataset.accelerator === "1";

  function marks(events) {
    return events.map((event) => ({
      type: "line",
      xref: "x",
      yref: "paper",
      x0: event.at,
      x1: event.at,
      y0: 0,
      y1: 1,
      line: { width: 1, dash: "dot", color: MARK_COLOURS[event.kind === "decay" ? "decay" : "other"] },
    }));
  }

  // What the dotted lines are, as legend entries of their own (a trace with no point shows
  // only in the legend): decays grey, share changes and usage resets red.
  const MARK_COLOURS = { decay: "#8d99ae", other: "#e63946" };
  function markLegend(events) {
    const kinds = new Set(events.map((event) => (event.kind === "decay" ? "decay" : "other")));
    return [...kinds].sort().map((kind) => ({
      type: "scatter",
      mode: "lines",
      x: [null],
      y: [null],
      name:
        kind === "decay"
          ? "decay"
          : slurm
            ? "share change or usage reset"
            : accelerator
              ? "weight change"
              : "share change",
      line: { width: 1, dash: "dot", color: MARK_COLOURS[kind] },
      hoverinfo: "skip",
    }));
  }

  // Time ticks: dates, hours and minutes; never the milliseconds of a range of one instant.
  const TIME_AXIS = {
    type: "date",
    title: { text: "time (UTC)" },
    tickformatstops: [
      { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
      { dtickrange: [86400000, null], value: "%b %d\n%Y" },
    ],
    automargin: true,
  };

  function draw(data) {
    // One point draws no line: a sentence says what there is instead of empty axes.
    const thin = data.at.length < 2;
    const empty = document.getElementById("history-empty");
    empty.hidden = !thin;
    empty.textContent =
      data.at.length === 0
        ? "No cycle has run in this range yet: the charts start with the first one."
        : `One cycle in this range so far (${data.at[0].slice(0, 16).replace("T", " ")} UTC):` +
          " the charts start with the second.";
    for (const id of ["history-usage", "history-standing"]) {
      document.getElementById(id).hidden = thin;
    }
    if (thin) return;
    const layout = (title, yTitle) => ({
      title: { text: title },
      height: 280,
      margin: { t: 40, l: 70, r: 20, b: 50 },
      shapes: marks(data.events),
      hovermode: "x unified",
      xaxis: TIME_AXIS,
      yaxis: { title: { text: yTitle }, automargin: true },
    });
    const line = (name, values) => ({ type: "scatter", mode: "lines", name, x: data.at, y: values });
    const legend = markLegend(data.events);
    if (accelerator) {
      drawAccelerator(data, layout, line, legend);
      return;
    }
    const usageLayout = layout("Usage", `${chartText(box.dataset.unit)}, decayed`);
    usageLayout.showlegend = legend.length > 0;
    Plotly.react("history-usage", [line("usage", data.usage), ...legend], usageLayout, {
      displaylogo: false,
    });
    const standing = slurm
      ? [line("Level FS", data.level_fs.map((v) => (v === "inf" ? null : v))), line("FairShare", data.fairshare_factor)]
      : [
          line("tree usage", data.fairshare_tree_usage),
          line("target", data.fairshare_perc),
          line("factor (0.5 = on target)", data.fairshare_factor),
        ];
    const standingTitle = slurm ? "Level FS, FairShare" : "fraction of the machine; factor";
    Plotly.react("history-standing", [...standing, ...legend], layout("Standing", standingTitle), {
      displaylogo: false,
    });
  }

  // An Accelerator group: its running share and its history over its window against its
  // target, in % of the machine (the fields are integers ×10,000), and its running jobs.
  function drawAccelerator(data, layout, line, legend) {
    const fields = data.accelerator;
    const percent = (values) => values.map((v) => (v === null ? null : v / 100));
    const shares = [
      line("FS_RUNNING (running now)", percent(fields.FS_RUNNING)),
      line("FS_HISTORY (over its window)", percent(fields.FS_HISTORY)),
      { ...line("FS_TARGET (its target)", percent(fields.FS_TARGET)), line: { dash: "dash" } },
    ];
    const sharesLayout = layout("Running, history and target", "share of the machine (%)");
    sharesLayout.yaxis.rangemode = "tozero";
    sharesLayout.yaxis.ticksuffix = " %";
    Plotly.react("history-standing", [...shares, ...legend], sharesLayout, { displaylogo: false });
    const counts = { ...line("running jobs", fields.FS_RUNNING_COUNT), line: { shape: "hv" } };
    const countsLayout = layout("Running jobs", "running jobs (count)");
    countsLayout.yaxis.rangemode = "tozero";
    // Whole jobs: a tick every job or so, never half a job.
    const most = fields.FS_RUNNING_COUNT.reduce((top, v) => Math.max(top, v || 0), 0);
    countsLayout.yaxis.dtick = Math.max(1, Math.ceil(most / 5));
    countsLayout.showlegend = legend.length > 0;
    Plotly.react("history-usage", [counts, ...legend], countsLayout, { displaylogo: false });
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
