"""The board's stylesheet and script, written next to the pages (nothing external)."""

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header{background:#1d232b;color:#fff;padding:10px 24px}header a{color:#9cc8ff}
main{padding:16px 24px;max-width:1200px}
h1{font-size:20px;margin:4px 0}h2{font-size:17px;margin:24px 0 8px}h3{font-size:15px}
table{border-collapse:collapse;background:#fff;margin:8px 0}
th,td{border:1px solid #d8dde3;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;cursor:pointer}td.num{text-align:right;font-variant-numeric:tabular-nums}
.era{border-top:3px solid #3b6ea5;margin-top:20px}
.plots{display:flex;flex-wrap:wrap;gap:16px}
.plot{background:#fff;border:1px solid #d8dde3}
.plot .frame{fill:none;stroke:#99a}.plot .grid{stroke:#eee}
.plot .tick{font-size:11px;fill:#556}.plot .axis{font-size:12px;fill:#223}
.plot .label{font-size:11px;fill:#223}
.plot .point{fill:#8aa0b8;stroke:#334}.plot .point.pareto{fill:#e0602a}
.plot .frontier{fill:none;stroke:#e0602a;stroke-dasharray:4 3;stroke-width:2}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:10px}
.card{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:10px}
.run-card{background:#fff;border:1px solid #d8dde3;border-radius:6px;padding:14px}
.success{color:#1a7f37}.failed,.timeout{color:#b42318}.error{color:#8a5a00}
.nm{color:#8a5a00;font-weight:600}
.status-pass{color:#1a7f37}.status-partial{color:#8a5a00}
.status-fail,.status-vacuous,.status-absent{color:#b42318}.status-unavailable{color:#667}
section.why table{font-size:15px;min-width:60%}section.why th{cursor:default;width:9em}
section.why{border-left:6px solid #99a;padding-left:10px;margin:8px 0 4px}
section.outcome-success{border-color:#1a7f37}section.outcome-error{border-color:#8a5a00}
section.outcome-failed,section.outcome-timeout{border-color:#b42318}
tr.why-outcome td{font-weight:700}
details.output summary,details.diff summary,details.commands summary,
details.arithmetic summary{cursor:pointer;color:#3b6ea5}
pre.diff{background:#fff;border:1px solid #d8dde3;padding:8px;overflow:auto;max-height:600px}
.diff .add{color:#1a7f37}.diff .del{color:#b42318}.diff .hunk{color:#3b6ea5}
img.shot{max-width:100%;border:1px solid #d8dde3;margin:6px 0}
.note{color:#667}
details.step{border:1px solid #d6dbe1;border-radius:4px;margin:.3em 0;padding:.2em .6em}
details.step summary{cursor:pointer}
.msg{border-left:3px solid #c8d0da;margin:.3em 0;padding-left:.6em}
.msg.role-assistant{border-color:#5b8def}.msg.role-tool{border-color:#9ac27b}
.msg pre,pre.tool-call,pre.evidence,ol.commands pre{white-space:pre-wrap;margin:.2em 0}
pre.tool-call{background:#f3f5f7;padding:.3em}
"""

JS = """
// Click a table header to sort its rows; numbers sort numerically.
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var table = th.closest('table'), body = table.tBodies[0];
    var rows = Array.from(body.rows), asc = th.dataset.asc !== '1';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v || a.cells[col].textContent;
      var y = b.cells[col].dataset.v || b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.dataset.asc = asc ? '1' : '0';
  });
});
// Toggle long sections (the diff) open and closed.
document.querySelectorAll('button.toggle').forEach(function (b) {
  b.addEventListener('click', function () {
    var el = document.getElementById(b.dataset.target);
    el.hidden = !el.hidden;
  });
});
"""
