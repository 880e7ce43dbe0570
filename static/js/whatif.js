// A what-if's page: while a worker replays it, ask for its progress every second and show
// the result (reload the page) once it is done or failed; then draw the biggest projects'
// delivered share against their target over time.
"use strict";
(function () {
  const state = document.getElementById("scenario-state");
  if (state) {
    const bar = document.getElementById("scenario-progress");
    const label = document.getElementById("scenario-label");
    const working = ["queued", "running"];
    const poll = () => {
      fetch(state.dataset.url, { headers: { Accept: "application/json" } })
        .then((answer) => (answer.ok ? answer.json() : Promise.reject(answer.status)))
        .then((now) => {
          if (!working.includes(now.state)) {
            window.location.reload();
            return;
          }
          const percent = Math.floor(100 * now.progress);
          bar.value = now.progress;
          bar.textContent = `${percent} %`;
          label.textContent = `${now.label.charAt(0).toUpperCase()}${now.label.slice(1)}, ${percent} % done: this page follows it.`;
          window.setTimeout(poll, 1000);
        })
        .catch((problem) => {
          label.textContent = `The replay's progress could not be read (${problem}); asking again in 5 s.`;
          window.setTimeout(poll, 5000);
        });
    };
    window.setTimeout(poll, 1000);
  }

  const source = document.getElementById("whatif-chart-data");
  if (!source || !document.getElementById("whatif-chart")) return;
  const data = JSON.parse(source.textContent);
  // One panel a project, on the same axes; the side is the colour (Okabe and Ito's blue and
  // orange, told apart by the colour-blind), the dash tells delivered from target.
  const SIDES = {
    baseline: { colour: "#0072B2", dash: "solid", target: "target" },
    variant: { colour: "#E69F00", dash: "dash", target: "variant_target" },
  };
  const columns = data.projects.length > 1 ? 2 : 1;
  const rows = Math.ceil(data.projects.length / columns);
  const highest = Math.max(
    10,
    ...data.projects.flatMap((project) =>
      [project.target, project.variant_target, ...project.baseline, ...(project.variant || [])]
        .filter((value) => value !== null),
    ),
  );
  const traces = [];
  const layout = {
    height: 110 + 230 * rows,
    margin: { t: 60, l: 70, r: 20, b: 50 },
    hovermode: "x unified",
    grid: { rows, columns, pattern: "independent", ygap: 0.35, xgap: 0.08 },
    annotations: [],
    // Above the panels, where it is read first: four entries for all of them.
    legend: { orientation: "h", x: 0, xanchor: "left", y: 1, yanchor: "top", yref: "container" },
  };
  data.projects.forEach((project, index) => {
    const axis = index === 0 ? "" : String(index + 1);
    const sides = data.variant && project.variant ? ["baseline", "variant"] : ["baseline"];
    sides.forEach((side) => {
      const look = SIDES[side];
      const line = (name, x, y, dash, width) => ({
        type: "scatter",
        mode: "lines",
        name,
        legendgroup: name,
        showlegend: index === 0,
        xaxis: `x${axis}`,
        yaxis: `y${axis}`,
        line: { color: look.colour, dash, width },
        x,
        y,
        meta: chartText(project.name),
        hovertemplate: `%{meta}, ${name}: %{y:.1f} %<extra></extra>`,
      });
      traces.push(line(`${side}: delivered`, data.at, project[side], look.dash, 2));
      const target = project[look.target];
      if (target !== null) {
        traces.push(line(`${side}: target`, data.ends, [target, target], "dot", 1.5));
      }
    });
    const bottom = index >= data.projects.length - columns;
    layout[`xaxis${axis}`] = {
      type: "date",
      matches: index === 0 ? undefined : "x",
      title: bottom ? { text: "time (UTC)" } : undefined,
      tickformatstops: [
        { dtickrange: [null, 86400000], value: "%b %d %H:%M" },
        { dtickrange: [86400000, null], value: "%b %d" },
      ],
    };
    layout[`yaxis${axis}`] = {
      range: [0, highest * 1.05],
      ticksuffix: " %",
      title: index % columns === 0 ? { text: "share of delivered<br>core-seconds (%)" } : undefined,
    };
    layout.annotations.push({
      text: `<b>${chartText(project.name)}</b>`,
      xref: `x${axis} domain`,
      yref: `y${axis} domain`,
      x: 0,
      y: 1,
      xanchor: "left",
      yanchor: "bottom",
      showarrow: false,
    });
  });
  Plotly.react("whatif-chart", traces, layout, { displaylogo: false });
})();
