"""CSS and JavaScript inlined into the HTML report (kept apart from the Python that assembles it).

The script never writes user data through ``innerHTML``: every string from the data block is placed with
``textContent`` (or as an attribute value through the DOM API), so a document text like ``<script>`` is
displayed, never parsed as HTML. Both blocks are allowed by their SHA-256 hashes in the page's
Content-Security-Policy, so nothing else can run or style the page.
"""

CSS = r"""
:root { --fg:#1d2230; --muted:#5f6b7a; --line:#dde2ea; --bg:#f7f8fb; --win:#0072B2; --loss:#D55E00;
        --rel:#e6f1f8; --relb:#9cc3df; --nonrel:#fbede4; --nonrelb:#efc3a6; --unj:#f1f3f6; --accent:#0072B2; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); }
header { padding: 18px 28px 10px; background: #fff; border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 2px 0; color: var(--muted); }
nav { padding: 6px 28px; background: #fff; border-bottom: 1px solid var(--line); font-size: 13px; }
nav a { color: var(--accent); margin-right: 14px; text-decoration: none; }
nav a:hover, nav a:focus { text-decoration: underline; }
main { padding: 8px 28px 40px; max-width: 1500px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px; margin: 16px 0; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; vertical-align: top; }
th { background: #f1f3f8; font-weight: 600; }
th.l, td.l { text-align: left; }
td.best { font-weight: 700; }
.ci { color: var(--muted); font-size: 12px; font-weight: 400; }
sup { color: var(--accent); font-weight: 600; }
.grp { display: inline-block; margin-left: 6px; padding: 0 5px; border-radius: 8px; font-size: 11px; font-weight: 600;
       color: #5b2a86; background: #f1e8f8; border: 1px solid #dcc7ec; }
.sig-pos { color: var(--win); font-weight: 600; }
.sig-neg { color: var(--loss); font-weight: 600; }
.note { color: var(--muted); font-size: 13px; }
.metric-plots { margin: 6px 0 18px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
figure.plot { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 4px; background: #fff; }
figure.plot svg { display: block; max-width: 100%; height: auto; }
figure.plot figcaption { display: flex; justify-content: space-between; align-items: center; gap: 8px;
                         font-size: 12px; color: var(--muted); padding: 2px 4px; }
button.dl { font: inherit; font-size: 12px; padding: 1px 8px; border: 1px solid #c5ccd8; border-radius: 4px;
            background: #fff; cursor: pointer; color: var(--fg); }
.pts circle, .hit, .tip { cursor: pointer; }
.pts circle:hover { stroke: #1d2230; stroke-width: 1.5; }
#tip { position: fixed; z-index: 10; max-width: 420px; padding: 5px 8px; border-radius: 4px; background: #1d2230;
       color: #fff; font-size: 12px; line-height: 1.35; pointer-events: none; white-space: pre-line; }
#tip[hidden] { display: none; }
.controls { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: end; margin-bottom: 10px; }
.controls label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); gap: 2px; }
.controls select, .controls input { font: inherit; padding: 3px 6px; border: 1px solid #c5ccd8; border-radius: 4px; }
.controls input[type=search] { min-width: 220px; }
.chip { display: inline-flex; gap: 6px; align-items: center; padding: 2px 8px; border-radius: 12px;
        background: #e6f1f8; border: 1px solid var(--relb); font-size: 12px; }
.chip[hidden] { display: none; }
.chip button { font: inherit; border: 0; background: none; cursor: pointer; padding: 0 2px; }
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
.items li.rel { background: var(--rel); border-color: var(--relb); }
.items li.nonrel { background: var(--nonrel); border-color: var(--nonrelb); }
.items .rank { display: inline-block; min-width: 2.2em; color: var(--muted); font-variant-numeric: tabular-nums; }
.items .badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 9px; margin-right: 6px;
                background: #fff; border: 1px solid var(--line); }
.items .doc { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.items .score { float: right; color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.items .text { font-size: 12.5px; color: #333; margin-top: 2px; white-space: pre-wrap; overflow-wrap: anywhere;
               max-height: 7.5em; overflow: auto; }
code { overflow-wrap: anywhere; }
@media print {
  body { background: #fff; font-size: 11pt; }
  nav, .controls, .pager, button, #tip, #queries .note, .chip { display: none !important; }
  main { padding: 0; max-width: none; }
  section { border: 0; padding: 0; margin: 0 0 12pt; }
  figure.plot { break-inside: avoid; border-color: #999; }
  table, tr { break-inside: avoid; }
  a { color: inherit; }
}
"""

JS = r"""
(function () {
  "use strict";
  var D = null;
  var EPS = 1e-12;
  var state = { metric: 0, pair: 0, sort: "run:0:asc", show: "all", search: "", page: 0, size: 50,
                selected: -1, subset: null };
  var rows = [];
  var tip = document.getElementById("tip");

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function opt(select, value, label) { var o = el("option", null, label); o.value = value; select.appendChild(o); }
  function missing(v) { return v === null || v === undefined || v !== v; }
  function fmt(v, d) { return missing(v) ? "\u2013" : v.toFixed(d === undefined ? 4 : d); }
  function fmtDelta(v) { return missing(v) ? "\u2013" : (v > 0 ? "+" : "") + v.toFixed(4); }

  // ------------------------------------------------------------------------------------------ data
  function b64bytes(text) {
    if (Uint8Array.fromBase64) { return Uint8Array.fromBase64(text.replace(/\s+/g, "")); }
    var bin = atob(text.replace(/\s+/g, "")), n = bin.length, out = new Uint8Array(n);
    for (var i = 0; i < n; i++) { out[i] = bin.charCodeAt(i); }
    return out;
  }
  function load() {
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot unpack the report's data (it needs DecompressionStream: " +
        "Chrome 80, Firefox 113, Safari 16.4 or later)"));
    }
    var bytes = b64bytes($("ragrade-data").textContent);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).arrayBuffer().then(function (buf) {
      var view = new DataView(buf), n = view.getUint32(0, true);
      var head = JSON.parse(new TextDecoder().decode(new Uint8Array(buf, 4, n)));
      var base = 4 + n; base += (8 - base % 8) % 8;
      var A = {};
      Object.keys(head.arrays).forEach(function (name) {
        var spec = head.arrays[name], kind = spec[0], off = base + spec[1], len = spec[2];
        A[name] = kind === "f8" ? new Float64Array(buf, off, len)
          : (kind === "f4" ? new Float32Array(buf, off, len) : new Int32Array(buf, off, len));
      });
      head.A = A;
      head.runIndex = {};
      head.runs.forEach(function (r, k) { head.runIndex[r] = k; });
      return head;
    });
  }
  function scoreOf(m, r, i) { return D.A["s" + m + "_" + r][i]; }
  function pairRuns() { var p = D.pairs[state.pair]; return [D.runIndex[p[0]], D.runIndex[p[1]]]; }
  function delta(i) {
    if (D.pairs.length === 0) { return null; }
    var pr = pairRuns(), a = scoreOf(state.metric, pr[0], i), b = scoreOf(state.metric, pr[1], i);
    return (missing(a) || missing(b)) ? null : b - a;
  }

  // ----------------------------------------------------------------------------------- query table
  function setupControls() {
    var m = $("ctl-metric");
    D.metrics.forEach(function (name, k) { opt(m, String(k), name); });
    var p = $("ctl-pair");
    if (D.pairs.length) {
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
    if (D.pairs.length) {
      opt(s, "absdelta:desc", "|\u0394|: biggest difference first");
      opt(s, "delta:asc", "\u0394: biggest loss first");
      opt(s, "delta:desc", "\u0394: biggest gain first");
    }
    opt(s, "id:asc", "query id");
    m.addEventListener("change", function () { state.metric = +m.value; refresh(); });
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
    $("subset-clear").addEventListener("click", function () { setSubset(null, ""); });
  }

  function setSubset(list, label) {
    state.subset = list ? new Set(list) : null;
    var chip = $("subset");
    chip.hidden = !list;
    $("subset-label").textContent = label || "";
    refresh();
  }

  function compute() {
    var q = state.search, show = state.show, out = [], i, d, nQ = D.qids.length;
    var r0 = state.sort.split(":");
    for (i = 0; i < nQ; i++) {
      if (state.subset && !state.subset.has(i)) { continue; }
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
    var kind = r0[0], dir = r0[r0.length - 1] === "desc" ? -1 : 1, key = null;
    if (kind === "run") { var r = +r0[1]; key = function (i) { var v = scoreOf(state.metric, r, i); return missing(v) ? null : v; }; }
    else if (kind === "delta") { key = delta; }
    else if (kind === "absdelta") { key = function (i) { var v = delta(i); return v === null ? null : Math.abs(v); }; }
    if (key) {
      var keys = new Float64Array(nQ), absent = new Uint8Array(nQ);
      out.forEach(function (i) { var v = key(i); if (v === null) { absent[i] = 1; } else { keys[i] = v; } });
      out.sort(function (a, b) {
        if (absent[a] !== absent[b]) { return absent[a] - absent[b]; }
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
    if (D.pairs.length) { tr.appendChild(el("th", null, "\u0394 " + D.pairs[state.pair][1] + " \u2212 " + D.pairs[state.pair][0])); }
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
      for (var r = 0; r < D.runs.length; r++) { tr.appendChild(el("td", null, fmt(scoreOf(state.metric, r, i)))); }
      if (D.pairs.length) {
        var d = delta(i);
        tr.appendChild(el("td", d === null ? null : (d > EPS ? "pos" : (d < -EPS ? "neg" : null)), fmtDelta(d)));
      }
      frag.appendChild(tr);
    }
    body.textContent = "";
    body.appendChild(frag);
    var nQ = D.qids.length;
    $("qcount").textContent = rows.length === 0 ? "No query matches (of " + nQ + ")."
      : "Showing " + (start + 1) + "\u2013" + end + " of " + rows.length + (rows.length === 1 ? " query (" : " queries (") + nQ + " in total).";
    $("pg-prev").disabled = state.page === 0;
    $("pg-next").disabled = end >= rows.length;
  }

  function itemLi(docIdx, grade, rankLabel, scoreValue) {
    var cls = missing(grade) ? "unjudged" : (grade > 0 ? "rel" : "nonrel");
    var li = el("li", cls);
    li.appendChild(el("span", "rank", rankLabel));
    var badge = cls === "rel" ? "\u2713 relevant (" + grade + ")" : (cls === "nonrel" ? "\u2717 not relevant" : "? unjudged");
    li.appendChild(el("span", "badge", badge));
    li.appendChild(el("span", "doc", D.docs[docIdx]));
    if (!missing(scoreValue)) { li.appendChild(el("span", "score", fmt(scoreValue, 4))); }
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
    D.metrics.forEach(function (m, mi) {
      var row = el("tr");
      row.appendChild(el("td", "l", m));
      D.runs.forEach(function (name, ri) { row.appendChild(el("td", null, fmt(scoreOf(mi, ri, i)))); });
      tbl.appendChild(row);
    });
    box.appendChild(tbl);
    var cols = el("div", "cols");
    D.runs.forEach(function (name, ri) {
      var A = D.A, col = el("div", "runcol");
      col.setAttribute("data-run", name);
      col.appendChild(el("h3", null, name + " \u2014 top " + D.depth));
      var off = A["to" + ri], a = off[i], b = off[i + 1];
      if (a === b) { col.appendChild(el("p", "note", "Nothing retrieved.")); }
      var ol = el("ol", "items");
      for (var k = a; k < b; k++) { ol.appendChild(itemLi(A["td" + ri][k], A["tg" + ri][k], "#" + (k - a + 1), A["ts" + ri][k])); }
      col.appendChild(ol);
      var mo = A["mo" + ri], ma = mo[i], mb = mo[i + 1];
      col.appendChild(el("h3", null, "Relevant items missed (" + (mb - ma) + ")"));
      var ul = el("ul", "items missed");
      for (var j = ma; j < mb; j++) {
        var rank = A["mr" + ri][j];
        var li = itemLi(A["md" + ri][j], A["mg" + ri][j], rank < 0 ? "\u2014" : "#" + rank, null);
        li.appendChild(el("div", "note", rank < 0 ? "not retrieved" : "retrieved at rank " + rank));
        ul.appendChild(li);
      }
      if (mb === ma) { ul.appendChild(el("li", "note", "none")); }
      col.appendChild(ul);
      cols.appendChild(col);
    });
    box.appendChild(cols);
  }

  function select(i, scroll) {
    state.selected = i;
    var trs = $("qtable").tBodies[0].rows;
    for (var k = 0; k < trs.length; k++) {
      trs[k].className = (+trs[k].getAttribute("data-index") === i) ? "selected" : "";
    }
    renderDetail(i);
    if (scroll) { $("detail").scrollIntoView({ block: "start" }); }
  }

  // ---------------------------------------------------------------------------------------- plots
  function figOf(node) { return node.closest ? node.closest("figure.plot") : null; }
  function showTip(text, ev) {
    tip.textContent = text;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) { x = ev.clientX - w - 10; }
    if (y + h > window.innerHeight - 4) { y = ev.clientY - h - 10; }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { tip.hidden = true; }
  function queryLine(fig, i) {
    var m = +fig.getAttribute("data-mi"), a = +fig.getAttribute("data-ai"), b = +fig.getAttribute("data-bi");
    var va = scoreOf(m, a, i), vb = scoreOf(m, b, i);
    return D.qids[i] + ": " + D.runs[a] + " " + fmt(va) + ", " + D.runs[b] + " " + fmt(vb) +
      " (\u0394 " + fmtDelta(missing(va) || missing(vb) ? null : vb - va) + ")";
  }
  function markQueries(node) { return node.getAttribute("data-q").split(" ").map(Number); }
  function orderOf(hit) {
    if (!hit._order) { hit._order = hit.getAttribute("data-order").split(" ").map(Number); }
    return hit._order;
  }
  function rankAt(hit, ev) {
    var box = hit.getBoundingClientRect(), order = orderOf(hit);
    var r = Math.floor((ev.clientX - box.left) / box.width * order.length);
    return Math.max(0, Math.min(order.length - 1, r));
  }
  function guide(hit, ev) {
    var svg = hit.ownerSVGElement, line = svg.querySelector("line.guide");
    if (!line) {
      line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      line.setAttribute("class", "guide");
      line.setAttribute("stroke", "#1d2230");
      line.setAttribute("stroke-width", "1");
      line.setAttribute("pointer-events", "none");
      svg.appendChild(line);
    }
    var box = hit.getBoundingClientRect(), x0 = +hit.getAttribute("x"), w = +hit.getAttribute("width");
    var x = x0 + (ev.clientX - box.left) / box.width * w;
    line.setAttribute("x1", x); line.setAttribute("x2", x);
    line.setAttribute("y1", hit.getAttribute("y"));
    line.setAttribute("y2", +hit.getAttribute("y") + (+hit.getAttribute("height")));
    line.style.display = "";
  }
  function onOver(ev) {
    var t = ev.target, fig = figOf(t);
    if (!fig) { return; }
    if (t.hasAttribute && t.hasAttribute("data-tip")) { showTip(t.getAttribute("data-tip"), ev); return; }
    var holder = t.closest && t.closest("[data-tip]");
    if (holder) { showTip(holder.getAttribute("data-tip"), ev); return; }
    if (!D) { return; }
    if (t.hasAttribute && t.hasAttribute("data-q")) {
      var qs = markQueries(t);
      if (qs.length === 1) { showTip(queryLine(fig, qs[0]), ev); }
      else {
        var names = qs.slice(0, 4).map(function (i) { return D.qids[i]; }).join(", ");
        showTip(qs.length + (qs.length === 1 ? " query" : " queries") + " here: " + names + (qs.length > 4 ? ", \u2026" : "") +
          "\n" + queryLine(fig, qs[0]) + "\nclick to list them", ev);
      }
      return;
    }
    if (t.classList && t.classList.contains("hit")) {
      var order = orderOf(t), r = rankAt(t, ev);
      guide(t, ev);
      showTip("#" + (r + 1) + " of " + order.length + " \u2014 " + queryLine(fig, order[r]), ev);
    }
  }
  function onOut(ev) {
    hideTip();
    var t = ev.target;
    if (t.classList && t.classList.contains("hit")) {
      var line = t.ownerSVGElement.querySelector("line.guide");
      if (line) { line.style.display = "none"; }
    }
  }
  function onClick(ev) {
    var t = ev.target, fig = figOf(t);
    if (!fig || !D) { return; }
    if (t.hasAttribute && t.hasAttribute("data-q")) {
      var qs = markQueries(t);
      if (qs.length > 1) {
        var m = D.metrics[+fig.getAttribute("data-mi")];
        setSubset(qs, qs.length + (qs.length === 1 ? " query" : " queries") + " from the " + m + " plot");
        $("queries").scrollIntoView({ block: "start" });
      }
      select(qs[0], qs.length === 1);
    } else if (t.classList && t.classList.contains("hit")) {
      select(orderOf(t)[rankAt(t, ev)], true);
    }
  }
  function download(fig) {
    var svg = fig.querySelector("svg").cloneNode(true);
    var guides = svg.querySelectorAll("line.guide");
    for (var g = 0; g < guides.length; g++) { guides[g].remove(); }
    var all = [svg].concat(Array.prototype.slice.call(svg.querySelectorAll("*")));
    all.forEach(function (node) {
      Array.prototype.slice.call(node.attributes).forEach(function (at) {
        if (at.name === "class" || at.name === "pointer-events" || at.name.indexOf("data-") === 0) { node.removeAttribute(at.name); }
      });
    });
    var text = '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(svg);
    var url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
    var a = document.createElement("a");
    a.href = url;
    a.download = fig.getAttribute("data-name") + ".svg";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }
  function setupPlots() {
    var box = $("plots");
    if (!box) { return; }
    box.addEventListener("mouseover", onOver);
    box.addEventListener("mousemove", function (ev) {
      if (ev.target.classList && ev.target.classList.contains("hit")) { onOver(ev); }
      else if (!tip.hidden) { showTip(tip.textContent, ev); }
    });
    box.addEventListener("mouseout", onOut);
    box.addEventListener("click", onClick);
    var buttons = box.querySelectorAll("button.dl");
    for (var k = 0; k < buttons.length; k++) {
      buttons[k].hidden = false;
      buttons[k].addEventListener("click", function () { download(figOf(this)); });
    }
  }

  // ------------------------------------------------------------------------------------------ start
  setupPlots();
  $("qtable").tBodies[0].addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (D && tr && tr.hasAttribute("data-index")) { select(+tr.getAttribute("data-index"), false); }
  });
  $("qtable").tBodies[0].addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr");
    if (D && ev.key === "Enter" && tr && tr.hasAttribute("data-index")) { select(+tr.getAttribute("data-index"), false); }
  });
  load().then(function (data) {
    D = data;
    setupControls();
    refresh();
    document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
    document.body.setAttribute("data-ready", "1");
  }).catch(function (err) {
    $("qcount").textContent = "The per-query view could not be shown: " + err.message;
    document.body.setAttribute("data-ready", "error");
  });
})();
"""
