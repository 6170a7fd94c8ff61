"""Small HTTP and HTML helpers for suites: fetch JSON/text, call an API, parse table rows,
poll.

Failures come back as values (``Fetched.error``), not exceptions, because an app that
answers badly is a measurement, not a harness failure.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

#: what an app's bad answer raises: refused, reset, timed out, cut short (``IncompleteRead``
#: and the other ``http.client`` faults are not ``OSError``s), malformed
NO_ANSWER = (urllib.error.URLError, http.client.HTTPException, OSError, ValueError)


def _error_body(exc: urllib.error.HTTPError) -> str:
    """An HTTP error's body, or "" when there is none or it is cut short."""
    try:
        return exc.read().decode("utf-8", "replace") if exc.fp else ""
    except NO_ANSWER:
        return ""


@dataclass(frozen=True)
class Fetched:
    """One GET: status (None when no answer), body text, and an error description."""

    url: str
    status: int | None
    text: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    def json(self) -> Any:
        """The body parsed as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.text)
        except ValueError:
            return None


def get(url: str, timeout: float = 10.0) -> Fetched:
    """GET ``url``; HTTP errors and refused connections become a ``Fetched`` value."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return Fetched(url, int(resp.status), resp.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        return Fetched(url, exc.code, _error_body(exc), f"HTTP {exc.code}")
    except NO_ANSWER as exc:
        return Fetched(url, None, "", f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class Called:
    """One API call: status (None when no answer), the body parsed as JSON (None when it
    is not JSON), the raw text, an error description and the seconds it took."""

    status: int | None
    body: Any = None
    text: str = ""
    error: str | None = None
    took: float = 0.0


def call(
    url: str,
    method: str = "GET",
    body: Any = None,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 12.0,
) -> Called:
    """Call ``url`` with a JSON body (a ``str`` is sent as it is) and a bearer ``token``;
    HTTP errors and refused connections come back as a ``Called`` value."""
    data = None
    if body is not None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    for key, value in (headers or {}).items():
        req.add_header(key, value)
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            text, status = resp.read().decode("utf-8", "replace"), int(resp.status)
    except urllib.error.HTTPError as exc:
        text, status = _error_body(exc), exc.code
    except NO_ANSWER as exc:
        return Called(None, error=f"{type(exc).__name__}: {exc}", took=time.monotonic() - start)
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    return Called(status, parsed, text, took=time.monotonic() - start)


def poll(probe: Callable[[], bool], budget: float, interval: float = 0.1) -> bool:
    """Call ``probe`` until it returns True or ``budget`` seconds pass; its last answer."""
    deadline = time.monotonic() + budget
    while True:
        if probe():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


@dataclass(frozen=True)
class TableRow:
    """A ``<tbody><tr>``: its ``data-id`` attribute and its cells' text."""

    data_id: str | None
    cells: tuple[str, ...]


class _TbodyRows(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[TableRow] = []
        self._in_tbody = 0
        self._row: tuple[str | None, list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._in_tbody += 1
        elif tag == "tr" and self._in_tbody:
            self._close_row()
            self._row = (dict(attrs).get("data-id"), [])
        elif tag in ("td", "th") and self._row is not None:
            self._close_cell()
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self._close_cell()
        elif tag == "tr":
            self._close_row()
        elif tag == "tbody" and self._in_tbody:
            self._close_row()
            self._in_tbody -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def _close_cell(self) -> None:
        if self._cell is not None and self._row is not None:
            self._row[1].append(" ".join("".join(self._cell).split()))
        self._cell = None

    def _close_row(self) -> None:
        self._close_cell()
        if self._row is not None:
            self.rows.append(TableRow(self._row[0], tuple(self._row[1])))
        self._row = None


def tbody_rows(html: str) -> list[TableRow]:
    """Every ``tr`` inside a ``tbody`` of ``html`` (visibility is the browser's job)."""
    parser = _TbodyRows()
    parser.feed(html)
    parser.close()
    parser._close_row()
    return parser.rows
