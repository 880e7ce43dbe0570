// Trends: each child's decayed usage over the period, stacked.
"use strict";
(function () {
  const source = document.getElementById("trends-data");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  if (data.at.length === 0) return;
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
    yaxis: { title: { text: `usage (${data.unit}, decayed)` } },
  }, { displaylogo: false });
})();
