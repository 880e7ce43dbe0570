// The cluster page: a treemap sized by target share and a table, both filled from
// tree.json a few levels at a time; deeper nodes are fetched when opened. An Altair
// Accelerator cluster's are sized by FS_TARGET and coloured by FS_EXCESS_RUNNING, and its
// table holds the FS_* fields.
"use strict";
(function () {
  const app = document.getElementById("tree-app");
  if (!app) return;
  const treeUrl = app.dataset.treeUrl;
  const nodeUrl = (id) => app.dataset.nodeUrl.replace(/\/0\/$/, "/" + id + "/");
  const slurm = app.dataset.slurm === "1";
  const accelerator = app.dataset.accelerator === "1";
  const nodes = new Map(); // id -> document
  const kids = new Map(); // parent id -> Map of its children's ids -> documents, in tree order
  const loaded = new Set(); // ids whose children are in `nodes`
  const status = document.getElementById("tree-status");
  let rootUsage = 1;
  let sortKey = null;
  let sortDown = true;
  // The person's entities and every node above them: outlined in the chart, marked in the table.
  const given = JSON.parse(document.getElementById("tree-mine").textContent);
  const mine = new Set(given.mine);
  const above = new Set(given.above);

  // Every answer that fails says so on the page (the server's own words when it sent some),
  // and the tree stays as it was.
  function fetchTree(params, doing) {
    const query = new URLSearchParams(params).toString();
    return fetch(treeUrl + (query ? "?" + query : ""), { credentials: "same-origin" })
      .then((response) => {
        if (response.ok) return response.json();
        return response
          .json()
          .catch(() => ({}))
          .then((body) => {
            throw new Error(body.error || response.status + " " + response.statusText);
          });
      })
      .then((data) => {
        status.hidden = true;
        return data;
      })
      .catch((error) => {
        status.textContent = "Could not " + doing + ": " + error.message + ". Try again, or reload the page.";
        status.hidden = false;
        throw error;
      });
  }

  function take(documents, levels) {
    for (const doc of documents) {
      nodes.set(doc.id, doc);
      if (!kids.has(doc.parent)) kids.set(doc.parent, new Map());
      kids.get(doc.parent).set(doc.id, doc); // a document read again keeps its place
      if (doc.parent === null) rootUsage = doc.usage || 1;
    }
    for (const doc of documents) {
      if (levels > 0 && (doc.children === 0 || depthBelow(doc, documents[0]) < levels)) {
        loaded.add(doc.id);
      }
    }
  }

  function depthBelow(doc, top) {
    return doc.depth - top.depth;
  }

  function value(doc, key) {
    if (key.startsWith("FS_")) return doc.accelerator ? doc.accelerator[key] : null;
    if (key === "usage_share") return doc.usage / rootUsage;
    if (key === "fairshare") return doc.slurm ? doc.slurm.fairshare : null;
    if (key === "norm_shares" || key === "effectv_usage") return doc.slurm ? doc.slurm[key] : null;
    // Fair Tree's rank counts down (the most deserving of n users is n); places count up from
    // 1st, as on the standing pages, so a smaller place is better everywhere.
    if (key === "place") return doc.fairshare_rank ? doc.fairshare_rank.of - doc.fairshare_rank.rank + 1 : null;
    return doc[key];
  }

  // Numbers as the schedulers' printf prints them (trees/quantities.py for the pages): half to
  // even on the binary value, as "%f" does (toFixed rounds ties up); usage and usage/perc as
  // "%.0f" with thousands separators.
  const printf = (digits, grouping) =>
    new Intl.NumberFormat("en-US", {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      roundingMode: "halfEven",
      useGrouping: grouping,
    });
  const whole = printf(0, false);
  const sixPlaces = printf(6, false);
  const thousands = printf(0, true);
  const twoPlaces = printf(2, true);

  // Accelerator's FS_* shares are integers ×10,000: 2500 is 25.00 % (trees/quantities.py).
  function fsPercent(scaled) {
    return scaled === null || scaled === undefined ? "" : twoPlaces.format(scaled / 100);
  }

  function percentCell(scaled) {
    return scaled === null || scaled === undefined ? "" : fsPercent(scaled) + " %";
  }

  // An FS_EXCESS_* field in percentage points, signed: -625 is -6.25, 2500 is +25.00.
  function fsPoints(scaled) {
    if (scaled === null || scaled === undefined) return "";
    return (scaled > 0 ? "+" : "") + twoPlaces.format(scaled / 100);
  }

  function shown(number, format) {
    if (number === null || number === undefined) return "";
    if (number === "inf") return "inf";
    if (typeof number !== "number") return String(number);
    return format.format(number);
  }

  // A target share as pbsfs -g prints it: PBS multiplies its float32 share by 100 in float32;
  // Slurm's shares are doubles.
  function percent(fraction) {
    if (fraction === null || fraction === undefined) return "";
    return sixPlaces.format(slurm ? fraction * 100 : Math.fround(Math.fround(fraction) * 100));
  }

  const columns = accelerator
    ? [["FS_TARGET", percentCell], ["FS_RUNNING", percentCell], ["FS_RUNNING_COUNT", (n) => shown(n, thousands)],
       ["FS_EXCESS_RUNNING", fsPoints], ["FS_EXCESS_RUNNING_LOCAL", fsPoints], ["FS_HISTORY", percentCell],
       ["FS_EXCESS_HISTORY", fsPoints], ["FS_RANK", (n) => shown(n, whole)]]
    : slurm
    ? [["norm_shares", sixPlaces], ["effectv_usage", sixPlaces], ["level_fs", sixPlaces],
       ["fairshare", sixPlaces], ["place", whole]]
    : [["usage_perc", thousands], ["fairshare_tree_usage", sixPlaces], ["fairshare_factor", sixPlaces]];

  function children(id) {
    const below = kids.get(id);
    const docs = below ? [...below.values()] : [];
    if (sortKey) {
      docs.sort((a, b) => {
        const x = value(a, sortKey);
        const y = value(b, sortKey);
        const order = x === y ? 0 : x === null ? 1 : y === null ? -1 : x < y ? -1 : 1;
        return sortDown ? -order : order;
      });
    }
    return docs;
  }

  const open = new Set();

  function row(doc) {
    const tr = document.createElement("tr");
    tr.dataset.id = doc.id;
    const name = document.createElement("td");
    name.style.paddingLeft = 0.2 + 1.2 * doc.depth + "rem";
    if (doc.children > 0) {
      const toggle = document.createElement("button");
      toggle.className = "toggle";
      toggle.type = "button";
      toggle.textContent = open.has(doc.id) ? "▾" : "▸";
      toggle.setAttribute("aria-label", (open.has(doc.id) ? "close " : "open ") + doc.name);
      toggle.addEventListener("click", () => toggleNode(doc.id));
      name.append(toggle, " ");
    }
    if (doc.opens) {
      const link = document.createElement("a");
      link.href = nodeUrl(doc.id);
      link.textContent = doc.name;
      name.append(link);
    } else {
      name.append(doc.name);
    }
    if (mine.has(doc.id)) {
      tr.classList.add("mine");
      const tag = document.createElement("span");
      tag.className = "tag";
      tag.textContent = "yours";
      name.append(" ", tag);
    }
    tr.append(name);
    const shares = doc.shares === null ? "" : String(doc.shares);
    // Accelerator's columns format their own fields; the others' share PBS's first four.
    const cells = accelerator
      ? [doc.kind, shares, ...columns.map(([key, format]) => format(value(doc, key)))]
      : [
          doc.kind,
          shares,
          percent(doc.fairshare_perc),
          thousands.format(doc.usage),
          sixPlaces.format((100 * doc.usage) / rootUsage),
          ...columns.map(([key, format]) => shown(value(doc, key), format)),
        ];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    return tr;
  }

  function render() {
    const body = document.querySelector("#tree-table tbody");
    const rows = [];
    const walk = (doc) => {
      rows.push(row(doc));
      if (open.has(doc.id)) children(doc.id).forEach(walk);
    };
    [...nodes.values()].filter((doc) => !nodes.has(doc.parent)).forEach(walk);
    body.replaceChildren(...rows);
    chart();
  }

  function toggleNode(id) {
    if (open.has(id)) {
      open.delete(id);
      render();
      return;
    }
    open.add(id);
    loadChildren(id).then(render, () => {
      open.delete(id);
      render();
    });
  }

  function loadChildren(id) {
    if (loaded.has(id)) return Promise.resolve();
    return fetchTree({ node: id, levels: 1 }, "open " + nodes.get(id).name).then((data) => {
      take(data.nodes, 1);
      loaded.add(id);
    });
  }

  // Opens the path down to each of the person's entities, a level at a time, so the chart and
  // the table show them however deep they sit.
  function openMine(rounds) {
    const next = [...nodes.values()].filter(
      (doc) => above.has(doc.id) && doc.children > 0 && (!loaded.has(doc.id) || !open.has(doc.id)),
    );
    if (!next.length || rounds === 0) return Promise.resolve();
    next.forEach((doc) => open.add(doc.id));
    return Promise.all(next.map((doc) => loadChildren(doc.id))).then(() => openMine(rounds - 1));
  }

  function colour(doc, by) {
    if (accelerator) return doc.accelerator ? (doc.accelerator.FS_EXCESS_RUNNING || 0) / 100 : 0;
    if (by === "ratio") {
      return doc.fairshare_perc > 0 ? doc.usage / rootUsage / doc.fairshare_perc : 0;
    }
    if (slurm) {
      const lfs = doc.level_fs;
      return lfs === "inf" ? 10 : lfs === null ? 1 : Math.min(lfs, 10);
    }
    return doc.fairshare_factor;
  }

  // The colour in words, as the hover says it: what it is, and which side of the target.
  function colourSaid(doc, by) {
    if (accelerator) {
      const fields = doc.accelerator || {};
      const excess = fields.FS_EXCESS_RUNNING || 0;
      const count = fields.FS_RUNNING_COUNT || 0;
      return (
        `running ${fsPercent(fields.FS_RUNNING)} % (${count} job${count === 1 ? "" : "s"}): ` +
        (excess === 0 ? "on target" : `${fsPoints(excess)} points, ${side(-excess)}`)
      );
    }
    if (by === "ratio") {
      if (!(doc.fairshare_perc > 0)) return "no target share";
      const ratio = doc.usage / rootUsage / doc.fairshare_perc;
      return `usage ${ratio.toFixed(2)} × target (${side(1 - ratio)})`;
    }
    if (slurm) {
      const lfs = doc.level_fs;
      if (lfs === null || lfs === undefined) return "no Level FS (Slurm leaves it unset here)";
      if (lfs === "inf") return "Level FS inf (no usage: under target)";
      return `Level FS ${lfs.toFixed(2)} (${side(lfs - 1)})`;
    }
    return `factor ${doc.fairshare_factor.toFixed(2)} (${side(doc.fairshare_factor - 0.5)})`;
  }

  function side(aboveOnTarget) {
    if (aboveOnTarget > 0) return "under target";
    return aboveOnTarget < 0 ? "over target" : "on target";
  }

  // The colour bar says which end is over target, beside the numbers (red is over target
  // whichever colouring is chosen).
  function scaleSaid(by, factor, far) {
    if (accelerator) {
      const half = far / 2;
      return {
        title: { text: "FS_EXCESS_RUNNING (points)" },
        tickvals: [-far, -half, 0, half, far],
        ticktext: [`−${far} under target`, `−${half}`, "0 on target", `+${half}`, `+${far} over target`],
      };
    }
    if (factor) {
      return {
        title: { text: "factor" },
        tickvals: [0, 0.25, 0.5, 0.75, 1],
        ticktext: ["0 over target", "0.25", "0.5 on target", "0.75", "1 under target"],
      };
    }
    const over = by === "ratio";
    return {
      title: { text: over ? "usage / target" : "Level FS" },
      tickvals: [0, 0.5, 1, 1.5, 2],
      ticktext: [
        over ? "0 under target" : "0 over target",
        "0.5",
        "1 on target",
        "1.5",
        over ? "2+ over target" : "2+ under target",
      ],
    };
  }

  // ColorBrewer's RdYlBu, safe for the colour-blind (red-green is not): red over target, blue
  // under, as the pages' words and tables colour them (site.css).
  const RED_YELLOW_BLUE = [
    [0, "#d73027"],
    [0.25, "#fc8d59"],
    [0.5, "#ffffbf"],
    [0.75, "#91bfdb"],
    [1, "#4575b4"],
  ];

  function chart() {
    if (!window.Plotly) return;
    const chosen = document.querySelector("input[name=colour]:checked");
    const by = chosen ? chosen.value : "excess";
    const docs = [...nodes.values()];
    const ids = new Set(docs.map((doc) => doc.id));
    const factor = by === "factor" && !slurm && !accelerator;
    // Accelerator: centred on 0 points (on target), both ends as far as the furthest group.
    const far = docs.reduce((most, doc) => Math.max(most, Math.ceil(Math.abs(colour(doc, by)))), 1);
    // branchvalues "remainder" adds a node's own value to its children's: a node's own value is
    // the target its loaded children do not already cover, so each column fills its parent.
    const covered = new Map();
    for (const doc of docs) {
      if (ids.has(doc.parent)) covered.set(doc.parent, (covered.get(doc.parent) || 0) + doc.fairshare_perc);
    }
    Plotly.react(
      "tree-chart",
      [
        {
          // A treemap, not an icicle: an icicle spends a column (a third of the width at three
          // levels) on the root's one block; here the root is the frame the rest fills.
          type: "treemap",
          tiling: { packing: "squarify", pad: 2 },
          // No path bar: drawn again zoomed (`level`) it draws NaN paths (plotly.js 3); the top
          // block of a zoomed view zooms back out instead.
          pathbar: { visible: false },
          ids: docs.map((doc) => String(doc.id)),
          labels: docs.map((doc) => chartText(doc.name)),
          parents: docs.map((doc) => (ids.has(doc.parent) ? String(doc.parent) : "")),
          values: docs.map((doc) => Math.max(0, doc.fairshare_perc - (covered.get(doc.id) || 0))),
          branchvalues: "remainder",
          marker: {
            colors: docs.map((doc) => colour(doc, by)),
            colorscale: RED_YELLOW_BLUE,
            line: {
              width: docs.map((doc) => (mine.has(doc.id) ? 4 : above.has(doc.id) ? 2.5 : 1)),
              color: docs.map((doc) => (mine.has(doc.id) || above.has(doc.id) ? "#111827" : "#ffffff")),
            },
            reversescale: by === "ratio" || accelerator,
            // Centred on "on target" (factor 0.5, ratio or Level FS 1, Accelerator's 0 points);
            // Level FS and the ratio have no upper bound, so twice the target is already the far
            // end.
            cmin: accelerator ? -far : 0,
            cmax: accelerator ? far : factor ? 1 : 2,
            showscale: true,
            colorbar: scaleSaid(by, factor, far),
          },
          customdata: docs.map((doc) => [
            accelerator && doc.accelerator ? fsPercent(doc.accelerator.FS_TARGET) : percent(doc.fairshare_perc),
            colourSaid(doc, by),
            mine.has(doc.id) ? "<br>yours" : above.has(doc.id) ? "<br>on your path" : "",
          ]),
          hovertemplate:
            "%{label}<br>target %{customdata[0]} %<br>%{customdata[1]}%{customdata[2]}<extra></extra>",
          // Accelerator's root and /class-like tops are single blocks: a level more shows users.
          maxdepth: accelerator ? 4 : 3,
          level: zoomLevel,
          textinfo: "label",
        },
      ],
      { margin: { t: 10, l: 10, r: 10, b: 10 }, height: 420 },
      { displaylogo: false, responsive: true },
    );
    if (!clickBound) {
      clickBound = true;
      document.getElementById("tree-chart").on("plotly_treemapclick", clicked);
    }
  }

  let clickBound = false;
  let zoomLevel = ""; // the block the treemap is zoomed into ("": the whole tree)

  // A click opens the block's page; with "zooms into it" chosen, plotly zooms as it does,
  // once the block's children are loaded. Returning false stops plotly's zoom.
  function clicked(event) {
    const point = event.points && event.points[0];
    const doc = point && nodes.get(Number(point.id));
    if (!doc) return true;
    const mode = document.querySelector("input[name=click]:checked").value;
    if (mode === "page") {
      if (doc.opens) window.location.assign(nodeUrl(doc.id));
      return false;
    }
    zoomLevel = event.nextLevel || "";
    if (doc.children > 0 && !loaded.has(doc.id)) {
      // Drawn again with its children once they come, zoomed by `level`: redrawing in the
      // middle of plotly's own zoom would leave it half way.
      open.add(doc.id);
      loadChildren(doc.id).then(render, () => {});
      return false;
    }
    return true;
  }

  document.querySelectorAll("#tree-table th[data-key]").forEach((th) => {
    th.addEventListener("click", () => {
      sortDown = sortKey === th.dataset.key ? !sortDown : true;
      sortKey = th.dataset.key;
      render();
    });
  });
  document.querySelectorAll("input[name=colour]").forEach((input) => {
    input.addEventListener("change", chart);
  });
  const search = document.getElementById("tree-search");
  let timer = null;
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const text = search.value.trim();
      if (!text) return;
      fetchTree({ q: text }, "search the tree").then((data) => {
        take(data.nodes, 0);
        for (const doc of data.nodes) {
          for (let up = nodes.get(doc.parent); up; up = nodes.get(up.parent)) open.add(up.id);
        }
        render();
        const first = data.nodes[data.nodes.length - 1];
        const tr = first && document.querySelector(`#tree-table tr[data-id="${first.id}"]`);
        if (tr) {
          tr.classList.add("found");
          tr.scrollIntoView({ block: "center" });
        }
      }, () => {});
    }, 250);
  });
  fetchTree({}, "load the tree")
    .then((data) => {
      take(data.nodes, 2);
      if (data.nodes.length) open.add(data.nodes[0].id);
      render();
      return openMine(8);
    })
    .then(render, () => {});
})();
