// The job page: the projection "if its entity ran nothing more" (fetched: it recomputes the
// tree), and the priority and place at each cycle while the job waits (in the page).
"use strict";
(function () {
  const whatif = document.getElementById("whatif");
  const sentence = document.getElementById("whatif-sentence");
  if (whatif && sentence) {
    fetch(whatif.dataset.url, { credentials: "same-origin" })
      .then((response) => {
        if (!response.ok) throw new Error(`the projection could not be read (${response.status})`);
        return response.json();
      })
      .then((data) => {
        sentence.textContent = data.sentence;
      })
      .catch((error) => {
        sentence.textContent = error.message;
      });
  }

  const data = document.getElementById("job-history");
  const chart = document.getElementById("job-history-chart");
  if (!data || !chart) return;
  const history = JSON.parse(data.textContent);
  const traces = [];
  if (history.priority.some((value) => value !== null)) {
    traces.push({ type: "scatter", mode: "lines+markers", name: "priority", x: history.at, y: history.priority, line: { shape: "hv", color: "#0072b2" } });
  }
  traces.push({ type: "scatter", mode: "lines+markers", name: "place in line", x: history.at, y: history.position, yaxis: traces.length ? "y2" : "y", line: { shape: "hv", color: "#e69f00" } });
  // Places are whole numbers, 1st on top: the axis runs from the last place seen to 1st.
  const last = Math.max(...history.position);
  const place = {
    title: { text: "place in line (1st on top)" },
    range: [last + 0.5, 0.5],
    tick0: 1,
    dtick: Math.max(1, Math.ceil(last / 6)),
    tickformat: "d",
    zeroline: false,
    automargin: true,
  };
  const layout = {
    height: 280,
    margin: { t: 40, l: 70, r: 70, b: 50 },
    hovermode: "x unified",
    legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
    xaxis: {
      type: "date",
      title: { text: "cycle (UTC)" },
      tickformatstops: [
        { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
        { dtickrange: [86400000, null], value: "%b %d\n%Y" },
      ],
      automargin: true,
    },
  };
  if (traces.length > 1) {
    layout.yaxis = { title: { text: "priority (sum of the terms)" }, automargin: true };
    layout.yaxis2 = { ...place, overlaying: "y", side: "right" };
  } else {
    layout.yaxis = place;
  }
  window.addEventListener("load", () => Plotly.react(chart, traces, layout, { displaylogo: false, responsive: true }));
})();
