// Names are the site's data, not markup: plotly reads tags (<a href>, <span style>, <b>, <br>)
// in every text it draws, labels, hover texts, legends, annotations and axis titles alike. Each
// chart passes what it did not write itself through chartText before plotly sees it; plotly
// turns the entities back into the characters when it draws.
"use strict";
window.chartText = (text) =>
  String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
