"""Rendered truth: server- and client-rendered pages look the same; overlays hide rows;
a missing browser is an infrastructure error, never a renormalised success."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from harness.appkit.browser import CHROMIUM, BrowserUnavailable, browser_session, probe_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

ROWS = [
    {"id": f"inv_{i:03d}", "customer": name, "currency": cur, "amount": amount}
    for i, (name, cur, amount) in enumerate(
        [
            ("<b>Bold</b> & Sons", "USD", "12.34"),
            ("Tom & Jerry <Ltd>", "JPY", "9007199254740993"),
            ("Müller GmbH", "KWD", "-0.007"),
        ]
        * 12
    )
]
_ESC = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def _esc(text: str) -> str:
    return "".join(_ESC.get(c, c) for c in text)


def _table(body: str = "", extra: str = "") -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'></head><body>"
        "<table><thead><tr><th>id</th><th>customer</th><th>currency</th><th>amount</th></tr>"
        f"</thead><tbody>{body}</tbody></table>{extra}</body></html>"
    )


SERVER_ROWS = "".join(
    f'<tr data-id="{r["id"]}"><td>{r["id"]}</td><td>{_esc(r["customer"])}</td>'
    f"<td>{r['currency']}</td><td>{r['amount']}</td></tr>"
    for r in ROWS
)
CLIENT_JS = """<script>
fetch('/rows.json').then(r => r.json()).then(rows => {
  const body = document.querySelector('tbody');
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.setAttribute('data-id', r.id);
    for (const k of ['id', 'customer', 'currency', 'amount']) {
      const td = document.createElement('td'); td.textContent = r[k]; tr.appendChild(td);
    }
    body.appendChild(tr);
  }
});
</script>"""
OVERLAY = (
    '<div style="position:fixed;inset:0;background:rgba(255,255,255,.9);{extra}">'
    "Backend unreachable</div>"
)
PAGES = {
    "/server": _table(SERVER_ROWS),
    "/client": _table("", CLIENT_JS),
    "/overlay": _table(SERVER_ROWS, OVERLAY.format(extra="")),
    "/overlay-passthrough": _table(SERVER_ROWS, OVERLAY.format(extra="pointer-events:none")),
    "/half-transparent": _table(
        SERVER_ROWS.replace('<tr data-id="inv_000">', '<tr data-id="inv_000" style="opacity:0">')
    ),
    # one amount cell cut with an ellipsis: the screen shows "900719..."
    "/ellipsis": _table(
        SERVER_ROWS.replace(
            "<td>9007199254740993</td>",
            '<td><div style="width:60px;overflow:hidden;text-overflow:ellipsis;'
            'white-space:nowrap">9007199254740993</div></td>',
            1,
        )
    ),
    # clipped by a fixed-width wrapper without an ellipsis
    "/clipped": _table(
        SERVER_ROWS.replace(
            "<td>12.34</td>",
            '<td><div style="width:18px;overflow:hidden;white-space:nowrap">12.34</div></td>',
            1,
        )
    ),
    # a fixed footer over the bottom of the viewport: the last row (scrolled as far as
    # the page goes) stays under it
    "/fixed-footer": _table(
        SERVER_ROWS,
        '<div style="position:fixed;left:0;right:0;bottom:0;height:60px;background:#fff">'
        "footer</div>",
    ),
    # the same footer with room below the table: every row can be scrolled clear of it
    "/fixed-footer-padded": _table(
        SERVER_ROWS,
        '<div style="height:80px"></div><div style="position:fixed;left:0;right:0;'
        'bottom:0;height:60px;background:#fff">footer</div>',
    ),
    # indented markup and a wrapping cell are a right page
    "/indented": _table(SERVER_ROWS.replace("<tr ", "\n      <tr ").replace("<td>", "\n<td>")),
    "/form": _table(
        "",
        "<input id='q'><button id='go' onclick=\"document.querySelector('tbody')"
        ".innerHTML='<tr data-id=x><td>'+document.querySelector('#q').value+"
        "'</td></tr>'\">go</button>",
    ),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/rows.json":
            body, ctype = json.dumps(ROWS), "application/json"
        else:
            body, ctype = PAGES.get(self.path, "not found"), "text/html; charset=utf-8"
        data = body.encode()
        self.send_response(200 if self.path in PAGES or self.path == "/rows.json" else 404)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _cells(probe: Any) -> list[tuple[str, list[str], bool]]:
    return [(r["id"], r["cells"], r["visible"]) for r in probe.rows]


def test_server_and_client_rendered_pages_are_seen_the_same(site: str, tmp_path: Path) -> None:
    server = probe_page(f"{site}/server", tmp_path, name="server")
    client = probe_page(f"{site}/client", tmp_path, name="client")
    assert server.visible_rows == client.visible_rows == len(ROWS)
    assert _cells(server) == _cells(client)
    # rendered text: markup shows literally, big amounts keep every digit
    assert server.rows[0]["cells"][1] == "<b>Bold</b> & Sons"
    assert client.rows[1]["cells"][3] == "9007199254740993"


@pytest.mark.parametrize("path", ["/overlay", "/overlay-passthrough"])
def test_an_overlay_over_the_rows_hides_them(site: str, tmp_path: Path, path: str) -> None:
    probe = probe_page(f"{site}{path}", tmp_path, name=path)
    assert probe.total_rows == len(ROWS)
    assert probe.visible_rows == 0
    # the values are still read (money is judged apart from visibility)
    assert probe.rows[0]["cells"][3] == "12.34"


def test_a_transparent_row_is_not_visible(site: str, tmp_path: Path) -> None:
    probe = probe_page(f"{site}/half-transparent", tmp_path, name="opacity")
    assert probe.visible_rows == len(ROWS) - 1
    assert not probe.rows[0]["visible"]


def test_journey_fills_clicks_and_waits(site: str, tmp_path: Path) -> None:
    with browser_session(tmp_path) as journey:
        journey.goto(f"{site}/form")
        journey.fill("#q", "<i>typed</i>")
        journey.click("#go")
        assert journey.wait_for("tbody tr")
        assert journey.rows()[0]["cells"] == ["typed"]


def test_a_missing_browser_is_an_infrastructure_error(tmp_path: Path) -> None:
    with pytest.raises(BrowserUnavailable), contextlib.ExitStack():
        probe_page("http://127.0.0.1:9/", tmp_path, executable=tmp_path / "no-chromium")


def test_an_ellipsis_clipped_amount_is_not_shown(site: str, tmp_path: Path) -> None:
    probe = probe_page(f"{site}/ellipsis", tmp_path, name="ellipsis")
    row = probe.rows[1]
    assert row["cells"][3] == "9007199254740993"  # innerText ignores the clipping
    assert row["shown"] == [True, True, True, False] and row["why"][3] == "ellipsis"
    assert not row["visible"] and probe.visible_rows == len(ROWS) - 1


def test_a_cell_cropped_by_its_wrapper_is_clipped(site: str, tmp_path: Path) -> None:
    probe = probe_page(f"{site}/clipped", tmp_path, name="clipped")
    assert probe.rows[0]["why"][3] == "clipped"
    assert probe.visible_rows == len(ROWS) - 1


def test_a_fixed_footer_covers_the_last_row(site: str, tmp_path: Path) -> None:
    probe = probe_page(f"{site}/fixed-footer", tmp_path, name="footer")
    assert not probe.rows[-1]["visible"] and "covered" in probe.rows[-1]["why"]
    assert all(r["visible"] for r in probe.rows[:-3])
    padded = probe_page(f"{site}/fixed-footer-padded", tmp_path, name="footer-padded")
    assert padded.visible_rows == len(ROWS)


def test_indented_markup_is_seen_like_compact_markup(site: str, tmp_path: Path) -> None:
    server = probe_page(f"{site}/server", tmp_path, name="server")
    indented = probe_page(f"{site}/indented", tmp_path, name="indented")
    assert _cells(indented) == _cells(server) and indented.visible_rows == len(ROWS)
