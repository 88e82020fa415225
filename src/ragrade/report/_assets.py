"""CSS and JavaScript inlined into the HTML report (kept apart from the Python that assembles it).

The script never writes user data through ``innerHTML``: every string from the data block is placed with
``textContent`` (or as an attribute value through the DOM API), so a document text like ``<script>`` is
displayed, never parsed as HTML.
"""

CSS = r"""
:root { --fg:#1d2230; --muted:#5f6b7a; --line:#dde2ea; --bg:#f7f8fb; --win:#2e7d32; --loss:#c62828;
        --rel:#e8f5e9; --nonrel:#fdecea; --unj:#f1f3f6; --accent:#1565c0; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); }
header { padding: 18px 28px 10px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 2px 0; color: var(--muted); }
main { padding: 8px 28px 40px; max-width: 1500px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 16px 0; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; vertical-align: top; }
th { background: #f1f3f8; font-weight: 600; }
th.l, td.l { text-align: left; }
td.best { font-weight: 700; }
.ci { color: var(--muted); font-size: 12px; }
sup { color: var(--accent); font-weight: 600; }
.sig-pos { color: var(--win); font-weight: 600; }
.sig-neg { color: var(--loss); font-weight: 600; }
.note { color: var(--muted); font-size: 13px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
.plots figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px; background: #fff; }
.plots img { display: block; max-width: 560px; width: 100%; height: auto; }
.plots figcaption { font-size: 12px; color: var(--muted); text-align: center; }
.controls { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: end; margin-bottom: 10px; }
.controls label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
.controls select, .controls input { font: inherit; padding: 3px 6px; border: 1px solid #c5ccd8; border-radius: 4px; }
.controls input[type=search] { min-width: 220px; }
.pager { display: flex; gap: 8px; align-items: center; margin: 8px 0; }
.pager button { font: inherit; padding: 2px 10px; border: 1px solid #c5ccd8; border-radius: 4px; background: #fff; cursor: pointer; }
.pager button:disabled { opacity: .4; cursor: default; }
#qtable tbody tr { cursor: pointer; }
#qtable tbody tr:hover { background: #f4f7ff; }
#qtable tbody tr.selected { background: #e3ecff; }
#qtable td.qtext { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.pos { color: var(--win); } .neg { color: var(--loss); }
#detail:empty { display: none; }
#detail { margin-top: 14px; border-top: 2px solid var(--line); padding-top: 6px; }
.qtitle { font-size: 15px; font-weight: 600; }
.qtitle code { font-size: 14px; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 14px; }
.cols > div { min-width: 0; }
ol.items, ul.items { list-style: none; margin: 0; padding: 0; }
.items li { border: 1px solid var(--line); border-radius: 5px; margin: 4px 0; padding: 4px 8px; background: var(--unj); }
.items li.rel { background: var(--rel); border-color: #b7dfba; }
.items li.nonrel { background: var(--nonrel); border-color: #f3c2bd; }
.items .rank { display: inline-block; min-width: 2.2em; color: var(--muted); font-variant-numeric: tabular-nums; }
.items .badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 9px; margin-right: 6px;
                background: #fff; border: 1px solid var(--line); }
.items .doc { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.items .score { float: right; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.items .text { font-size: 12.5px; color: #333; margin-top: 2px; white-space: pre-wrap; overflow-wrap: anywhere;
               max-height: 7.5em; overflow: auto; }
code { overflow-wrap: anywhere; }
"""

JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("ragrade-data").textContent);
  var EPS = 1e-12;
  var nQ = D.qids.length;
  var hasPairs = D.pairs.length > 0;
  var state = { metric: D.metrics[0], pair: 0, sort: "run:0:asc", show: "all", search: "", page: 0, size: 50,
                selected: -1 };
  var rows = [];

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function opt(select, value, label) { var o = el("option", null, label); o.value = value; select.appendChild(o); }
  function fmt(v, d) { return (v === null || v === undefined) ? "\u2013" : v.toFixed(d === undefined ? 4 : d); }
  function fmtDelta(v) { return v === null ? "\u2013" : (v > 0 ? "+" : "") + v.toFixed(4); }
  function score(r, i) { return D.scores[state.metric][D.runs[r]][i]; }
  function delta(i) {
    if (!hasPairs) { return null; }
    var p = D.pairs[state.pair];
    var a = D.scores[state.metric][p[0]][i], b = D.scores[state.metric][p[1]][i];
    return (a === null || b === null) ? null : b - a;
  }

  function setupControls() {
    var m = $("ctl-metric");
    D.metrics.forEach(function (name) { opt(m, name, name); });
    var p = $("ctl-pair");
    if (hasPairs) {
      D.pairs.forEach(function (pr, k) { opt(p, String(k), pr[1] + " \u2212 " + pr[0]); });
    } else {
      p.parentNode.style.display = "none";
      $("ctl-show").parentNode.style.display = "none";
    }
    var s = $("ctl-sort");
    D.runs.forEach(function (name, k) {
      opt(s, "run:" + k + ":asc", name + ": worst first");
      opt(s, "run:" + k + ":desc", name + ": best first");
    });
    if (hasPairs) {
      opt(s, "absdelta:desc", "|\u0394|: biggest difference first");
      opt(s, "delta:asc", "\u0394: biggest loss first");
      opt(s, "delta:desc", "\u0394: biggest gain first");
    }
    opt(s, "id:asc", "query id");
    m.addEventListener("change", function () { state.metric = m.value; refresh(); });
    p.addEventListener("change", function () { state.pair = +p.value; refresh(); });
    s.addEventListener("change", function () { state.sort = s.value; refresh(); });
    $("ctl-show").addEventListener("change", function () { state.show = this.value; refresh(); });
    $("ctl-size").addEventListener("change", function () { state.size = +this.value; state.page = 0; renderPage(); });
    var timer = null;
    $("ctl-search").addEventListener("input", function () {
      var box = this;
      clearTimeout(timer);
      timer = setTimeout(function () { state.search = box.value.trim().toLowerCase(); refresh(); }, 120);
    });
    $("pg-prev").addEventListener("click", function () { if (state.page > 0) { state.page--; renderPage(); } });
    $("pg-next").addEventListener("click", function () {
      if ((state.page + 1) * state.size < rows.length) { state.page++; renderPage(); }
    });
  }

  function compute() {
    var q = state.search, show = state.show, out = [], i, d;
    for (i = 0; i < nQ; i++) {
      if (q) {
        var hit = D.qids[i].toLowerCase().indexOf(q) >= 0;
        if (!hit && D.qtext && D.qtext[i]) { hit = D.qtext[i].toLowerCase().indexOf(q) >= 0; }
        if (!hit) { continue; }
      }
      if (show !== "all") {
        d = delta(i);
        if (d === null) { continue; }
        if (show === "gain" && !(d > EPS)) { continue; }
        if (show === "loss" && !(d < -EPS)) { continue; }
        if (show === "tie" && Math.abs(d) > EPS) { continue; }
      }
      out.push(i);
    }
    var parts = state.sort.split(":"), kind = parts[0], dir = parts[parts.length - 1] === "desc" ? -1 : 1;
    var key;
    if (kind === "run") { var r = +parts[1]; key = function (i) { return score(r, i); }; }
    else if (kind === "delta") { key = delta; }
    else if (kind === "absdelta") { key = function (i) { var v = delta(i); return v === null ? null : Math.abs(v); }; }
    else { key = null; }
    if (key) {
      var keys = new Float64Array(nQ);
      var missing = new Uint8Array(nQ);
      out.forEach(function (i) { var v = key(i); if (v === null) { missing[i] = 1; } else { keys[i] = v; } });
      out.sort(function (a, b) {
        if (missing[a] !== missing[b]) { return missing[a] - missing[b]; }
        var c = dir * (keys[a] - keys[b]);
        if (c !== 0) { return c; }
        return D.qids[a] < D.qids[b] ? -1 : (D.qids[a] > D.qids[b] ? 1 : 0);
      });
    } else {
      out.sort(function (a, b) { return D.qids[a] < D.qids[b] ? -1 : (D.qids[a] > D.qids[b] ? 1 : 0); });
    }
    rows = out;
  }

  function refresh() { compute(); state.page = 0; renderPage(); if (state.selected >= 0) { renderDetail(state.selected); } }

  function renderHead() {
    var tr = el("tr");
    tr.appendChild(el("th", "l", "query"));
    if (D.qtext) { tr.appendChild(el("th", "l", "text")); }
    D.runs.forEach(function (name) { tr.appendChild(el("th", null, name)); });
    if (hasPairs) { tr.appendChild(el("th", null, "\u0394 " + D.pairs[state.pair][1] + " \u2212 " + D.pairs[state.pair][0])); }
    var thead = $("qtable").tHead;
    thead.textContent = "";
    thead.appendChild(tr);
  }

  function renderPage() {
    renderHead();
    var body = $("qtable").tBodies[0];
    var frag = document.createDocumentFragment();
    var start = state.page * state.size, end = Math.min(rows.length, start + state.size);
    for (var k = start; k < end; k++) {
      var i = rows[k];
      var tr = el("tr");
      tr.setAttribute("data-index", String(i));
      tr.tabIndex = 0;
      if (i === state.selected) { tr.className = "selected"; }
      tr.appendChild(el("td", "l qid", D.qids[i]));
      if (D.qtext) { var t = el("td", "l qtext", D.qtext[i] || ""); t.title = D.qtext[i] || ""; tr.appendChild(t); }
      for (var r = 0; r < D.runs.length; r++) { tr.appendChild(el("td", null, fmt(score(r, i)))); }
      if (hasPairs) {
        var d = delta(i);
        tr.appendChild(el("td", d === null ? null : (d > EPS ? "pos" : (d < -EPS ? "neg" : null)), fmtDelta(d)));
      }
      frag.appendChild(tr);
    }
    body.textContent = "";
    body.appendChild(frag);
    $("qcount").textContent = rows.length === 0 ? "No query matches (of " + nQ + ")."
      : "Showing " + (start + 1) + "\u2013" + end + " of " + rows.length + " queries (" + nQ + " in total).";
    $("pg-prev").disabled = state.page === 0;
    $("pg-next").disabled = end >= rows.length;
  }

  function itemLi(docIdx, grade, rankLabel, scoreValue) {
    var cls = grade === null || grade === undefined ? "unjudged" : (grade > 0 ? "rel" : "nonrel");
    var li = el("li", cls);
    li.appendChild(el("span", "rank", rankLabel));
    var badge = cls === "rel" ? "\u2713 relevant (" + grade + ")" : (cls === "nonrel" ? "\u2717 not relevant" : "? unjudged");
    li.appendChild(el("span", "badge", badge));
    li.appendChild(el("span", "doc", D.docs[docIdx]));
    if (scoreValue !== null && scoreValue !== undefined) { li.appendChild(el("span", "score", fmt(scoreValue, 4))); }
    if (D.doctext && D.doctext[docIdx] !== null && D.doctext[docIdx] !== undefined) {
      li.appendChild(el("div", "text", D.doctext[docIdx]));
    }
    return li;
  }

  function renderDetail(i) {
    var box = $("detail");
    box.textContent = "";
    var title = el("div", "qtitle");
    title.appendChild(document.createTextNode("Query "));
    title.appendChild(el("code", null, D.qids[i]));
    title.appendChild(document.createTextNode("  \u00b7  " + D.nrel[i] + " relevant"));
    box.appendChild(title);
    if (D.qtext && D.qtext[i]) { box.appendChild(el("p", "qfull", D.qtext[i])); }
    var tbl = el("table", "qscores"), tr = el("tr");
    tr.appendChild(el("th", "l", "metric"));
    D.runs.forEach(function (name) { tr.appendChild(el("th", null, name)); });
    tbl.appendChild(tr);
    D.metrics.forEach(function (m) {
      var row = el("tr");
      row.appendChild(el("td", "l", m));
      D.runs.forEach(function (name) { row.appendChild(el("td", null, fmt(D.scores[m][name][i]))); });
      tbl.appendChild(row);
    });
    box.appendChild(tbl);
    var cols = el("div", "cols");
    D.runs.forEach(function (name) {
      var col = el("div", "runcol");
      col.setAttribute("data-run", name);
      col.appendChild(el("h3", null, name + " \u2014 top " + D.depth));
      var items = D.ranked[name][i];
      if (items.length === 0) { col.appendChild(el("p", "note", "Nothing retrieved.")); }
      var ol = el("ol", "items");
      items.forEach(function (it, k) { ol.appendChild(itemLi(it[0], it[2], "#" + (k + 1), it[1])); });
      col.appendChild(ol);
      var missed = D.missed[name][i];
      col.appendChild(el("h3", null, "Relevant items missed (" + missed.length + ")"));
      var ul = el("ul", "items missed");
      missed.forEach(function (it) {
        ul.appendChild(itemLi(it[0], it[1], it[2] === null ? "\u2014" : "#" + it[2], null));
        var last = ul.lastChild;
        last.appendChild(el("div", "note", it[2] === null ? "not retrieved" : "retrieved at rank " + it[2]));
      });
      if (missed.length === 0) { ul.appendChild(el("li", "note", "none")); }
      col.appendChild(ul);
      cols.appendChild(col);
    });
    box.appendChild(cols);
  }

  function select(i) {
    state.selected = i;
    var trs = $("qtable").tBodies[0].rows;
    for (var k = 0; k < trs.length; k++) {
      trs[k].className = (+trs[k].getAttribute("data-index") === i) ? "selected" : "";
    }
    renderDetail(i);
  }

  $("qtable").tBodies[0].addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (tr && tr.hasAttribute("data-index")) { select(+tr.getAttribute("data-index")); }
  });
  $("qtable").tBodies[0].addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr");
    if (ev.key === "Enter" && tr && tr.hasAttribute("data-index")) { select(+tr.getAttribute("data-index")); }
  });

  setupControls();
  refresh();
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "1");
})();
"""
