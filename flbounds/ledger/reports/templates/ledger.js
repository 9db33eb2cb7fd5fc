(function () {
  "use strict";
  // Rows come from the JSON blob; the table body is rebuilt on every filter change and a
  // claim's panel is built only when it is opened, so thousands of rows stay responsive.
  var DATA = JSON.parse(document.getElementById("ledger-data").textContent);
  var ROWS = DATA.rows, FIGS = DATA.figures, PAPERS = DATA.papers;
  var BY_ID = {};
  var VERDICT_ORDER = {"error": 0, "violated": 1, "not-reproduced": 2, "inconclusive": 3,
                       "not-applicable": 4, "reproduced": 5, "holds": 6};
  var SELECTS = ["paper", "kind", "verdict", "hyp_state", "attack_state", "tight_state"];
  var state = {q: "", unexpected: false, sort: "id", dir: 1, open: {}};
  SELECTS.forEach(function (k) { state[k] = ""; });

  function $(sel, root) { return (root || document).querySelector(sel); }
  function esc(value) {
    return String(value === null || value === undefined ? "" : value).replace(/[&<>"']/g,
      function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]; });
  }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function num(v) { return typeof v === "number" ? (Number.isInteger(v) ? String(v) : String(+v.toPrecision(6))) : String(v); }

  ROWS.forEach(function (r) {
    BY_ID[r.id] = r;
    r._hay = [r.id, r.ref, r.kind, r.statement, r.verdict, r.expected, r.reason, r.paper,
              r.unexpected ? "unexpected" : ""].join(" ").toLowerCase();
  });

  // ----- filters -------------------------------------------------------------------------
  var controls = {q: $("#q"), unexpected: $("#f-unexpected")};
  Array.prototype.forEach.call(document.querySelectorAll("#filters select"), function (sel) {
    var key = sel.getAttribute("data-key"), seen = {};
    controls[key] = sel;
    ROWS.forEach(function (r) { if (r[key]) seen[r[key]] = (seen[r[key]] || 0) + 1; });
    var values = Object.keys(seen).sort();
    if (!values.length) { sel.hidden = true; return; }
    values.forEach(function (v) {
      var o = document.createElement("option");
      o.value = v; o.textContent = v + " (" + seen[v] + ")";
      sel.appendChild(o);
    });
  });

  function matches(r, terms) {
    for (var i = 0; i < SELECTS.length; i++) {
      var k = SELECTS[i];
      if (state[k] && r[k] !== state[k]) return false;
    }
    if (state.unexpected && !r.unexpected) return false;
    for (var j = 0; j < terms.length; j++) if (r._hay.indexOf(terms[j]) < 0) return false;
    return true;
  }

  function compare(a, b) {
    var k = state.sort, x = a[k], y = b[k];
    if (k === "verdict" || k === "expected") { x = VERDICT_ORDER[x]; y = VERDICT_ORDER[y]; }
    if (x === y) return a.id < b.id ? -1 : 1;
    return (x < y ? -1 : 1) * state.dir;
  }

  // ----- table ---------------------------------------------------------------------------
  function rowHtml(r) {
    var open = state.open[r.id];
    var verdict = '<span class="verdict v-' + esc(r.verdict) + (r.unexpected ? " unexp" : "") +
      '">' + esc(r.verdict) + (r.unexpected ? " !" : "") + "</span>";
    var html = '<tr class="row' + (open ? " open" : "") + '" tabindex="0" id="' + esc(r.id) + '" data-id="' +
      esc(r.id) + '"><td class="id">' + esc(r.id) + "</td><td>" + esc(r.paper) + "</td><td>" +
      esc(r.ref) + "</td><td>" + esc(r.kind) + '</td><td class="stmt">' + esc(r.statement) +
      '</td><td class="num">' + esc(r.measured_short) + "</td><td>" + esc(r.relation) +
      '</td><td class="num">' + esc(r.theoretical_short) + "</td><td>" + verdict + "</td><td>" +
      esc(r.expected) + '</td><td class="num time">' + (+r.elapsed_s).toFixed(2) + " s</td></tr>";
    if (open) html += '<tr class="panel-row" data-panel="' + esc(r.id) + '"><td colspan="11">' + panel(r) + "</td></tr>";
    return html;
  }

  // Rows are appended a page at a time as the reader scrolls (or asks for more), so a
  // filter change touches a few hundred rows whatever the size of the ledger.
  var PAGE = 250, limit = PAGE, shown = [];
  function render(keepLimit) {
    var terms = state.q.toLowerCase().split(/\s+/).filter(Boolean);
    shown = ROWS.filter(function (r) { return matches(r, terms); }).sort(compare);
    if (!keepLimit) limit = PAGE;
    $("#claims tbody").innerHTML = shown.slice(0, limit).map(rowHtml).join("");
    $("#count").textContent = shown.length + " of " + ROWS.length + " claims";
    Array.prototype.forEach.call(document.querySelectorAll("#claims th[data-sort]"), function (th) {
      th.className = th.getAttribute("data-sort") === state.sort ? "sorted-" + state.dir : "";
    });
    updateMore();
  }
  function renderMore() {
    if (limit >= shown.length) return;
    var next = shown.slice(limit, limit + PAGE);
    limit += PAGE;
    $("#claims tbody").insertAdjacentHTML("beforeend", next.map(rowHtml).join(""));
    updateMore();
  }
  function updateMore() {
    var more = $("#more"), left = shown.length - limit;
    more.hidden = left <= 0;
    more.textContent = "show " + Math.min(left, PAGE) + " more (" + left + " not shown yet)";
  }
  function togglePanel(id) {
    var tr = document.getElementById(id);
    if (state.open[id]) {
      delete state.open[id];
      var panelRow = tr && tr.nextElementSibling;
      if (panelRow && panelRow.classList.contains("panel-row")) panelRow.remove();
      if (tr) tr.classList.remove("open");
    } else {
      state.open[id] = true;
      if (tr) {
        tr.classList.add("open");
        tr.insertAdjacentHTML("afterend", '<tr class="panel-row" data-panel="' + esc(id) + '"><td colspan="11">' + panel(BY_ID[id]) + "</td></tr>");
      }
    }
  }

  // ----- panel ---------------------------------------------------------------------------
  function valueHtml(v) {
    if (Array.isArray(v)) {
      var spaced = function (a) { return JSON.stringify(a).split(",").join(", "); };  // full precision
      var rows = v.every(Array.isArray) ? v.map(spaced).join("\n") : spaced(v);
      var nums = flatNums(v), head = "";
      if (nums.length > 4) head = '<div class="muted">' + nums.length + " values in [" + num(Math.min.apply(null, nums)) + ", " + num(Math.max.apply(null, nums)) + "]</div>";
      return head + "<pre>" + esc(rows) + "</pre>";
    }
    if (isObj(v)) return kvTable(v);
    if (typeof v === "string" && v.indexOf("\n") >= 0) return "<pre>" + esc(v) + "</pre>";
    return esc(num(v));
  }
  function flatNums(v) {
    var out = [];
    (function walk(x) { if (Array.isArray(x)) x.forEach(walk); else if (typeof x === "number") out.push(x); })(v);
    return out;
  }
  function kvTable(obj, fmtValue) {
    var keys = Object.keys(obj || {});
    if (!keys.length) return '<span class="muted">none</span>';
    return '<table class="kv">' + keys.map(function (k) {
      return "<tr><th>" + esc(k) + "</th><td>" + (fmtValue || valueHtml)(obj[k]) + "</td></tr>";
    }).join("") + "</table>";
  }
  function hypValue(v) {
    if (v === true) return '<span class="met">met</span>';
    if (v === false) return '<span class="left">not met</span>';
    return '<span class="left">' + esc(v) + "</span>";
  }
  function dl(pairs) {
    return "<dl>" + pairs.filter(function (p) { return p[1] !== "" && p[1] !== undefined && p[1] !== null; })
      .map(function (p) { return "<dt>" + esc(p[0]) + "</dt><dd>" + p[1] + "</dd>"; }).join("") + "</dl>";
  }
  function claimLink(id) {
    return '<a class="claim-jump" href="#' + esc(encodeURIComponent(id)) + '">' + esc(id) + "</a>" +
      (BY_ID[id] ? " (" + esc(BY_ID[id].verdict) + ")" : " (no row shown)");
  }
  function section(title, body) { return "<h4>" + esc(title) + "</h4>" + body; }

  function panel(r) {
    var tol = r.tolerance || {}, out = ['<div class="panel">'];
    out.push('<p class="stmt">' + esc(r.statement) + "</p>");
    out.push(dl([["reference", esc(r.ref)], ["paper", esc(r.paper) + (r.citation ? ": " + esc(r.citation) : PAPERS[r.paper] ? ": " + esc(PAPERS[r.paper]) : "")],
      ["kind", esc(r.kind)], ["verdict", esc(r.verdict) + (r.unexpected ? ' <strong class="bad">(expected ' + esc(r.expected) + ")</strong>" : " (as expected)")],
      ["by how much", r.margin ? esc(r.margin) : ""],
      ["corrects", r.corrects ? "the printed statement " + claimLink(r.corrects) : ""],
      ["corrected by", (r.corrected_by || []).length ? r.corrected_by.map(claimLink).join(", ") : ""],
      ["reason", r.reason ? esc(r.reason) : ""]]));
    var none = function (v) { return v === null || v === undefined; };
    if (none(r.measured) && none(r.theoretical)) out.push(section("measured", '<span class="muted">nothing measured' +
      (r.verdict === "error" ? ": the check did not finish (see the reason)" : "") + "</span>"));
    else out.push(section("measured " + (r.relation || "") + " theoretical",
      '<div class="cmp"><div>measured ' + (none(r.measured) ? "—" : valueHtml(r.measured)) + '</div><div class="rel">' + esc(r.relation || "—") +
      "</div><div>theoretical " + (none(r.theoretical) ? "—" : valueHtml(r.theoretical)) + "</div></div>"));
    if (tol.name || !none(tol.value)) out.push(section("tolerance", dl([["name", esc(tol.name || "")],
      ["value", none(tol.value) ? "" : valueHtml(tol.value)], ["derivation", esc(tol.derivation || "")]])));
    if (Object.keys(r.hypotheses || {}).length) out.push(section("hypotheses (" + esc(r.hyp_state) + ")", kvTable(r.hypotheses, hypValue)));
    if (Object.keys(r.attack || {}).length) out.push(section("adversarial search", kvTable(r.attack)));
    if (Object.keys(r.worst_case || {}).length) out.push(section("worst case (PEP)", kvTable(r.worst_case)));
    if (Object.keys(r.details || {}).length) out.push(section("details", kvTable(r.details)));
    if (r.traceback) out.push(section("traceback", "<details><summary>show</summary><pre>" + esc(r.traceback) + "</pre></details>"));
    if (r.figures.length) out.push(section("figures", '<div class="thumbs">' + r.figures.map(function (name) {
      var f = FIGS[name], img = document.querySelector("#fig-" + CSS.escape(name) + " img");
      return '<figure><a href="#fig-' + esc(name) + '"><img src="' + (img ? img.src : "") + '" alt="' + esc(f.title) + '" loading="lazy"></a><figcaption>' +
        esc(name) + ": " + esc(f.title) + "</figcaption></figure>";
    }).join("") + "</div>"));
    out.push(section("reproduce", '<div class="repro"><code>' + esc(r.reproducer) + '</code><button type="button" class="copy" data-copy="' +
      esc(r.reproducer) + '">copy</button></div>'));
    var versions = Object.keys(r.versions || {}).map(function (k) { return esc(k) + " " + esc(r.versions[k]); }).join(", ");
    out.push(section("provenance", dl([["seed", esc(r.seed)], ["profile", esc(r.profile)], ["parameters", kvTable(r.params)],
      ["versions", versions], ["git commit", esc(r.git_commit)], ["started", esc(r.started)], ["finished", esc(r.finished)],
      ["elapsed", (+r.elapsed_s).toFixed(3) + " s"], ["task key", esc(r.task_key)]])));
    out.push("</div>");
    return out.join("");
  }

  // ----- copy ----------------------------------------------------------------------------
  function copyText(text, button) {
    function done(ok) {
      button.textContent = ok ? "copied" : "select and copy";
      setTimeout(function () { button.textContent = "copy"; }, 1500);
    }
    function fallback() {
      var area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(area); done(ok);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
    } else fallback();
  }

  // ----- state <-> controls and URL ------------------------------------------------------
  function pullControls() {
    state.q = controls.q.value;
    state.unexpected = controls.unexpected.checked;
    SELECTS.forEach(function (k) { state[k] = controls[k].value; });
  }
  function pushControls() {
    controls.q.value = state.q;
    controls.unexpected.checked = state.unexpected;
    SELECTS.forEach(function (k) {
      var sel = controls[k];
      if (state[k] && !Array.prototype.some.call(sel.options, function (o) { return o.value === state[k]; })) {
        var o = document.createElement("option"); o.value = o.textContent = state[k]; sel.appendChild(o);
      }
      sel.value = state[k];
    });
  }
  function syncUrl() {
    var params = new URLSearchParams();
    if (state.q) params.set("q", state.q);
    SELECTS.forEach(function (k) { if (state[k]) params.set(k, state[k]); });
    if (state.unexpected) params.set("unexpected", "1");
    var query = params.toString();
    try { history.replaceState(null, "", (query ? "?" + query : location.pathname) + location.hash); } catch (e) { /* file:// in some browsers */ }
  }
  function readUrl() {
    var params = new URLSearchParams(location.search);
    state.q = params.get("q") || "";
    SELECTS.forEach(function (k) { state[k] = params.get(k) || ""; });
    state.unexpected = params.get("unexpected") === "1";
  }
  function clearFilters() {
    state.q = ""; state.unexpected = false;
    SELECTS.forEach(function (k) { state[k] = ""; });
  }
  function update() { pullControls(); render(); syncUrl(); }

  function openFromHash(scroll) {
    var id = decodeURIComponent(location.hash.slice(1));
    if (!BY_ID[id]) return;
    if (shown.indexOf(BY_ID[id]) < 0) { clearFilters(); pushControls(); syncUrl(); render(); }
    var index = shown.indexOf(BY_ID[id]);
    if (index >= limit) { limit = index + PAGE; render(true); }
    if (!state.open[id]) togglePanel(id);
    var row = document.getElementById(id);
    if (row && scroll) row.scrollIntoView({block: "start"});
  }

  // ----- events --------------------------------------------------------------------------
  var timer = null;
  controls.q.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(update, 120); });
  controls.unexpected.addEventListener("change", update);
  SELECTS.forEach(function (k) { controls[k].addEventListener("change", update); });
  $("#reset").addEventListener("click", function () { clearFilters(); state.open = {}; pushControls(); render(); syncUrl(); });
  $("#claims thead").addEventListener("click", function (ev) {
    var key = ev.target.getAttribute && ev.target.getAttribute("data-sort");
    if (!key) return;
    state.dir = state.sort === key ? -state.dir : 1; state.sort = key; render();
  });
  $("#claims tbody").addEventListener("click", function (ev) {
    var copy = ev.target.closest("button.copy");
    if (copy) { copyText(copy.getAttribute("data-copy"), copy); return; }
    if (ev.target.closest("a, pre, .panel")) return;
    var tr = ev.target.closest("tr.row");
    if (!tr) return;
    var id = tr.getAttribute("data-id");
    togglePanel(id);
    try { history.replaceState(null, "", location.search + (state.open[id] ? "#" + encodeURIComponent(id) : "")); } catch (e) { /* ignore */ }
  });
  $("#claims tbody").addEventListener("keydown", function (ev) {
    var tr = ev.target.closest && ev.target.closest("tr.row");
    if (tr && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); togglePanel(tr.getAttribute("data-id")); }
  });
  document.addEventListener("click", function (ev) {
    var cell = ev.target.closest && ev.target.closest("#summary button.cell");
    var link = ev.target.closest && ev.target.closest("a.claim-link");
    if (cell) {
      clearFilters();
      state.paper = cell.getAttribute("data-paper") || "";
      state.verdict = cell.getAttribute("data-verdict") || "";
      state.unexpected = cell.getAttribute("data-unexpected") === "1";
    } else if (link) {
      ev.preventDefault(); clearFilters(); state.q = link.getAttribute("data-q");
    } else return;
    pushControls(); render(); syncUrl();
    $("#ledger").scrollIntoView({block: "start"});
  });
  window.addEventListener("hashchange", function () { openFromHash(true); });
  $("#more").addEventListener("click", renderMore);
  if ("IntersectionObserver" in window) {
    new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) renderMore();
    }, {rootMargin: "600px"}).observe($("#more"));
  }

  readUrl(); pushControls(); render();
  if (location.hash.length > 1) openFromHash(true);
  document.documentElement.setAttribute("data-ready", "1");
})();
