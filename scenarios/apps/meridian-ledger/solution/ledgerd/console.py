"""The console page: server-rendered tables, escaped text, one small script for approvals."""

from html import escape

from ledgerd.money import berlin_minute, format_minor

SCRIPT = """
document.addEventListener('click', async (ev) => {
  const button = ev.target.closest('button.approve');
  if (!button) return;
  const id = button.dataset.draft;
  const error = document.getElementById('error');
  error.hidden = true;
  button.disabled = true;
  try {
    const resp = await fetch('/api/drafts/' + encodeURIComponent(id) + '/approve', {
      method: 'POST',
      headers: {'Authorization': 'Bearer ' + document.getElementById('token').value.trim()},
    });
    const body = await resp.json();
    if (!resp.ok) throw new Error(body.error || ('HTTP ' + resp.status));
    const row = document.querySelector('tr[data-id="' + id + '"]');
    row.querySelector('td.state').textContent = body.state;
    button.remove();
  } catch (e) {
    error.textContent = 'Approval failed: ' + e.message;
    error.hidden = false;
    button.disabled = false;
  }
});
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; }
table { border-collapse: collapse; margin-bottom: 1.5rem; }
td, th { border: 1px solid #ccc; padding: 2px 8px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.alert { background: #fdd; border: 1px solid #c00; padding: 8px; margin-bottom: 1rem; }
"""


def render(app, page):
    status = app.status()
    per = 100
    total, rows = app.store.query("", (), per, (page - 1) * per)
    out = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<title>ledgerd console</title><style>",
        STYLE,
        "</style></head><body><h1>Payments ledger</h1>",
    ]
    if status["vendor"] == "down":
        why = escape(status.get("last_error") or "no answer")
        out.append(
            f"<div id='vendor-down' class='alert' role='alert'>Vendor unavailable: {why}. "
            "Showing stored data; approvals cannot complete now.</div>"
        )
    out.append(
        f"<p id='sync'>Sync: {escape(status['sync'])}, {status['payments']} payments.</p>"
        "<p id='error' class='alert' role='alert' hidden></p>"
        "<h2>Totals</h2><table id='totals'><thead><tr><th>Currency</th><th>Count</th>"
        "<th>Amount</th></tr></thead><tbody>"
    )
    for currency, count, amount in app.store.summary()[0]:
        out.append(
            f"<tr data-id='total-{currency}'><td>{currency}</td><td class='num'>{count}</td>"
            f"<td class='num'>{format_minor(amount, currency)}</td></tr>"
        )
    out.append(
        "</tbody></table><h2>Drafts</h2><label>Token <input id='token' type='password' "
        "autocomplete='off'></label><table id='drafts'><thead><tr><th>Draft</th>"
        "<th>Counterparty</th><th>Currency</th><th>Amount</th><th>State</th><th></th></tr>"
        "</thead><tbody>"
    )
    for d in app.store.drafts():
        action = ""
        if d["state"] != "executed":
            action = f"<button class='approve' data-draft='{escape(d['id'])}'>Approve</button>"
        out.append(
            f"<tr data-id='{escape(d['id'])}'><td>{escape(d['id'])}</td>"
            f"<td>{escape(d['counterparty'])}</td><td>{d['currency']}</td>"
            f"<td class='num'>{format_minor(d['amount_minor'], d['currency'])}</td>"
            f"<td class='state'>{escape(d['state'])}</td><td>{action}</td></tr>"
        )
    out.append(
        "</tbody></table><h2>Payments</h2><table id='payments'><thead><tr><th>Id</th>"
        "<th>Created (Berlin)</th><th>Counterparty</th><th>Currency</th><th>Amount</th>"
        "<th>Status</th></tr></thead><tbody>"
    )
    for pid, amount, currency, st, counterparty, created_at, _day, _v in rows:
        out.append(
            f"<tr data-id='{escape(pid)}'><td>{escape(pid)}</td>"
            f"<td>{berlin_minute(created_at)}</td><td>{escape(counterparty)}</td>"
            f"<td>{currency}</td><td class='num'>{format_minor(amount, currency)}</td>"
            f"<td>{escape(st)}</td></tr>"
        )
    out.append("</tbody></table><nav>")
    pages = max(1, -(-total // per))
    if page > 1:
        out.append(f"<a href='/?page={page - 1}'>previous</a> ")
    out.append(f"page {page} of {pages}")
    if page < pages:
        out.append(f" <a href='/?page={page + 1}'>next</a>")
    out.append(f"</nav><script>{SCRIPT}</script></body></html>")
    return "".join(out)
