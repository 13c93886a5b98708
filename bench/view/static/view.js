// bench view: sort any table.sortable by a header click; filter table.filterable from the
// selects in #filters. The filter state lives in the URL hash (#verdict=FAIL&arm=a), so a
// filtered view is a link someone else can open.
(function () {
  "use strict";

  function cellKey(row, index) {
    var cell = row.cells[index];
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    return /^-?\d+(\.\d+)?$/.test(raw) ? parseFloat(raw) : raw.toLowerCase();
  }

  function sortBy(table, th) {
    var index = Array.prototype.indexOf.call(th.parentNode.children, th);
    var ascending = !th.classList.contains("asc");
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(ascending ? "asc" : "desc");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, index), y = cellKey(b, index);
      if (typeof x !== typeof y) { x = String(x); y = String(y); }
      return (x < y ? -1 : x > y ? 1 : 0) * (ascending ? 1 : -1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  function readHash() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv[0]) { state[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1] || ""); }
    });
    return state;
  }

  function applyFilters(form) {
    var state = {};
    Array.prototype.forEach.call(form.elements, function (el) { if (el.name && el.value) { state[el.name] = el.value; } });
    var shown = 0;
    document.querySelectorAll("table.filterable tbody tr").forEach(function (row) {
      var visible = Object.keys(state).every(function (key) { return row.getAttribute("data-" + key) === state[key]; });
      row.hidden = !visible;
      if (visible) { shown += 1; }
    });
    var counter = document.getElementById("shown");
    if (counter) { counter.textContent = shown + " shown"; }
    var hash = Object.keys(state).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(state[k]);
    }).join("&");
    if (("#" + hash) !== location.hash && (hash || location.hash)) {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    }
  }

  function loadFilters(form) {
    var state = readHash();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (el.name) { el.value = state[el.name] || ""; }
    });
    applyFilters(form);
  }

  document.querySelectorAll("table.sortable thead th").forEach(function (th) {
    th.addEventListener("click", function () { sortBy(th.closest("table"), th); });
  });
  var form = document.getElementById("filters");
  if (form) {
    form.addEventListener("change", function () { applyFilters(form); });
    window.addEventListener("hashchange", function () { loadFilters(form); });
    loadFilters(form);
  }
}());
