// Trends: each child's decayed usage over the period, stacked; then each child's share of the
// siblings' usage against its target share, as lines.
"use strict";
(function () {
  const source = document.getElementById("trends-data");
  if (!source) return;
  const data = JSON.parse(source.textContent);
  if (data.at.length < 2) return; // the page says so in a sentence: one point draws no line
  // Okabe and Ito's palette, told apart by the colour-blind; a child keeps its colour in both.
  const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442"];
  const colour = (index) => PALETTE[index % PALETTE.length];
  const timeAxis = {
    type: "date",
    title: { text: "time (UTC)" },
    tickformatstops: [
      { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
      { dtickrange: [86400000, null], value: "%b %d\n%Y" },
    ],
  };
  const layout = (yTitle, extra) => ({
    height: 360,
    margin: { t: 20, l: 70, r: 20, b: 40 },
    hovermode: "x unified",
    xaxis: timeAxis,
    yaxis: { title: { text: yTitle }, automargin: true, ...extra },
  });
  Plotly.react(
    "trends-chart",
    data.series.map((series, index) => ({
      type: "scatter",
      mode: "lines",
      stackgroup: "usage",
      name: chartText(series.name),
      line: { color: colour(index) },
      x: data.at,
      y: series.usage,
    })),
    layout(`usage (${chartText(data.unit)}, decayed)`, {}),
    { displaylogo: false },
  );
  if (!document.getElementById("shares-chart")) return;
  const percent = (values) => values.map((value) => (value === null ? null : 100 * value));
  const lines = [];
  data.series.forEach((series, index) => {
    const name = chartText(series.name);
    lines.push({
      type: "scatter",
      mode: "lines",
      name: `${name}: share of usage`,
      legendgroup: series.name,
      line: { color: colour(index), width: 2.5 },
      x: data.at,
      y: percent(series.usage_share),
      hovertemplate: "%{y:.1f} %",
    });
    lines.push({
      type: "scatter",
      mode: "lines",
      name: `${name}: target`,
      legendgroup: series.name,
      line: { color: colour(index), width: 1.5, dash: "dash" },
      x: data.at,
      y: percent(series.target_share),
      hovertemplate: "%{y:.1f} %",
    });
  });
  // The legend goes below: two entries a child would crowd out the plot at its right.
  const below = { height: 480, legend: { orientation: "h", y: -0.2, yanchor: "top" } };
  Plotly.react(
    "shares-chart",
    lines,
    { ...layout("share of the siblings' usage (%)", { rangemode: "tozero" }), ...below },
    { displaylogo: false },
  );
})();
