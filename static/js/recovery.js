// The recovery projection: the node's factor at each coming decay if it ran nothing more.
"use strict";
(function () {
  const box = document.getElementById("recovery");
  if (!box) return;
  const sentence = document.getElementById("recovery-sentence");
  fetch(box.dataset.url, { credentials: "same-origin" })
    .then((response) => {
      if (!response.ok) throw new Error(`the projection could not be read (${response.status})`);
      return response.json();
    })
    .then((data) => {
      sentence.textContent = data.sentence;
      // Already on target, or never a decay to come: the sentence says it all, one point no chart.
      if (data.at.length < 2) {
        document.getElementById("recovery-chart").hidden = true;
        return;
      }
      const target = { type: "scatter", mode: "lines", name: "on target (0.5)", x: [data.at[0], data.at[data.at.length - 1]], y: [0.5, 0.5], line: { dash: "dot", color: "#8d99ae" } };
      const factor = { type: "scatter", mode: "lines+markers", name: "factor", x: data.at, y: data.fairshare_factor, line: { shape: "hv" } };
      Plotly.react("recovery-chart", [factor, target], {
        title: { text: "Fairshare factor with no further usage" },
        height: 260,
        margin: { t: 40, l: 60, r: 20, b: 40 },
        xaxis: {
          type: "date",
          title: { text: "decay (UTC)" },
          tickformatstops: [
            { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
            { dtickrange: [86400000, null], value: "%b %d\n%Y" },
          ],
        },
        yaxis: { range: [0, 1], title: { text: "fairshare factor" }, automargin: true },
      }, { displaylogo: false });
    })
    .catch((error) => {
      sentence.textContent = error.message;
    });
})();
