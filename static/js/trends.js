// Trends: each child's decayed usage over the period, stacked.
"use strict";
(function () {
  const source = document.getElementById("trends-data");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  if (data.at.length < 2) return; // the page says so in a sentence: one point draws no area
  const traces = data.series.map((series) => ({
    type: "scatter",
    mode: "lines",
    stackgroup: "usage",
    name: series.name,
    x: data.at,
    y: series.usage,
  }));
  Plotly.react("trends-chart", traces, {
    height: 360,
    margin: { t: 20, l: 70, r: 20, b: 40 },
    hovermode: "x unified",
    xaxis: {
      type: "date",
      title: { text: "time (UTC)" },
      tickformatstops: [
        { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
        { dtickrange: [86400000, null], value: "%b %d\n%Y" },
      ],
    },
    yaxis: { title: { text: `usage (${data.unit}, decayed)` }, automargin: true },
  }, { displaylogo: false });
})();
