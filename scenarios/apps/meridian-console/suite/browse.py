"""Browser probes of apps/meridian-console: rendered rows, the feed, the WebGL field.

Rendered truth (the app kit's ``rendered_rows``): a cell counts as shown only when its
whole text is visible: displayed and styled visible, inside the viewport once its row is
scrolled to, inside every clipping ancestor's box (an ellipsis or an ``overflow: hidden``
span inside the cell included), and on top at the centre and both ends of every text
rectangle. The field is measured from what the GPU-less browser rendered:
``GL_WRAP`` wraps every WebGL context before the page's scripts run and records the
draw calls (instance counts, target framebuffer) and clears; pixels are read back
through a 2D canvas; picking is a real mouse click at a cell's centre.
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

from harness.appkit.rendered import rendered_rows

#: what marks a frontend file as holding code its author did not write (SPEC 1.5, 6.6:
#: "no libraries, no minified copies of anything"): a library's license banner, a
#: bundler's runtime, a source map, a known library's own name for itself. None of these
#: is what one writes by hand in a four-file console; a pasted library with every banner
#: stripped and its lines kept is not found (the four-file rule and the budget remain).
THIRD_PARTY = {
    "license banner": re.compile(
        r"@license\b|@preserve\b|/\*!|SPDX-License-Identifier|Permission is hereby granted"
        r"|Licensed under the Apache License|Redistribution and use in source and binary"
    ),
    "bundler runtime": re.compile(r"__webpack_require__|parcelRequire|__vite_ssr|System\.register\("),  # noqa: E501  (a calibrated string, kept as it was scored)
    "source map": re.compile(r"[#@] sourceMappingURL="),
    "known library": re.compile(
        r"\bTHREE\.REVISION\b|\bglMatrix\.|\btwgl\.|\bcreateREGL\b|\bPIXI\.|\bBABYLON\."
        r"|jQuery v\d|lodash\.com|d3js\.org|react\.production"
    ),
}
#: a minified copy: a line this long in a file this large (the reference's longest is 160)
MINIFIED_LINE, MINIFIED_FILE = 2000, 4000


def third_party_marks(text: str) -> list[str]:
    """The marks of third-party code in one served frontend file, by name (empty: none)."""
    found = [name for name, pattern in THIRD_PARTY.items() if pattern.search(text)]
    if len(text) >= MINIFIED_FILE and max(map(len, text.splitlines()), default=0) >= MINIFIED_LINE:
        found.append("minified")
    return found


#: the default view's grid (SPEC 6.5): cell i at column i % 128, row i // 128, 8 css px
FIELD_COLS, FIELD_ROWS, CELL_PX = 128, 96, 8
#: a drag whose image is the default view moved by whole cells at this share of the
#: status-coloured samples is a pan (a rotation matches no translation that well), when
#: it also misses at most ``PAN_CHANCE`` of what a shift matched by chance would miss
#: (a field of one status nearly everywhere matches any shift)
PAN_MATCH, PAN_CHANCE, PAN_MIN_SAMPLES, PAN_PROBE = 0.95, 0.25, 100, 40
#: where in each sampled cell the drag's image is read, in cells (``grid_cells``)
PAN_SPOTS = ((0.5, 0.5), (1.0, 0.5), (0.5, 1.0), (1.0, 1.0))


def grid_cells(step: int = 5) -> list[tuple[int, int]]:
    """Cells sampled over the whole field after a drag (their default-view centres)."""
    return [(x, y) for y in range(2, FIELD_ROWS, step) for x in range(2, FIELD_COLS, step)]


def pan_shift(
    cells: list[tuple[int, int]], seen: list[str], layout: str
) -> tuple[tuple[int, int], float, int] | None:
    """The whole-cell translation of the default view that best explains what a drag left.

    ``seen[k]`` is the status letter whose colour the pixel at ``cells[k]``'s default
    centre shows after the drag ("" for the plane or anything else: not counted);
    ``layout[i]`` is cell i's status letter in the default view. A pan by any amount puts
    every column's colour at a centre of the default grid shifted by whole cells, within
    the column's width. Returns ``((dx, dy), share, n)`` for the best shift other than
    none that matches at ``PAN_MATCH`` and well above chance (``PAN_CHANCE``), or None
    (also when fewer than ``PAN_MIN_SAMPLES`` samples are status-coloured).
    """
    pts = [(x, y, c) for (x, y), c in zip(cells, seen, strict=True) if c]
    if len(pts) < PAN_MIN_SAMPLES:
        return None

    def letter(x: int, y: int) -> str:
        i = y * FIELD_COLS + x
        inside = 0 <= x < FIELD_COLS and 0 <= y < FIELD_ROWS and i < len(layout)
        return layout[i] if inside else ""

    probe = pts[:: max(1, len(pts) // PAN_PROBE)][:PAN_PROBE]
    need = int(PAN_MATCH * len(probe))
    shown = [c for c in layout if c]
    chance = sum(
        (sum(1 for _, _, c in pts if c == k) / len(pts)) * (shown.count(k) / max(1, len(shown)))
        for k in set(shown)
    )
    floor = max(PAN_MATCH, 1.0 - PAN_CHANCE * (1.0 - chance))
    best: tuple[tuple[int, int], float, int] | None = None
    for dy in range(1 - FIELD_ROWS, FIELD_ROWS):
        for dx in range(1 - FIELD_COLS, FIELD_COLS):
            if (dx, dy) == (0, 0):
                continue
            hits = sum(1 for x, y, c in probe if letter(x - dx, y - dy) == c)
            if hits < need:
                continue
            share = sum(1 for x, y, c in pts if letter(x - dx, y - dy) == c) / len(pts)
            if share >= floor and (best is None or share > best[1]):
                best = ((dx, dy), share, len(pts))
    return best


GL_WRAP = """(() => {
  const log = [];
  window.__gl = { log, contexts: 0, kinds: [] };
  const orig = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = function (kind, opts) {
    const ctx = orig.call(this, kind, opts);
    if (!ctx || ctx.__wrapped || !/webgl/.test(String(kind))) return ctx;
    ctx.__wrapped = true;
    window.__gl.contexts += 1;
    window.__gl.kinds.push(String(kind));
    // the framebuffers drawn into and read from (WebGL2 binds them apart); instances drawn
    // into an offscreen one since its clear reach the screen when it is blitted there
    let fb = null, readFb = null;
    const pending = new Map();
    const bind = ctx.bindFramebuffer.bind(ctx);
    ctx.bindFramebuffer = (t, f) => {
      if (t === 0x8CA9) fb = f;             // DRAW_FRAMEBUFFER
      else if (t === 0x8CA8) readFb = f;    // READ_FRAMEBUFFER
      else { fb = f; readFb = f; }          // FRAMEBUFFER: both
      return bind(t, f);
    };
    const drew = (n) => { if (fb !== null) pending.set(fb, (pending.get(fb) || 0) + n); };
    const clear = ctx.clear.bind(ctx);
    ctx.clear = (m) => {
      if (fb !== null) pending.set(fb, 0);
      log.push({op: 'clear', screen: fb === null}); return clear(m); };
    for (const name of ['drawArrays', 'drawElements']) {
      const f = ctx[name].bind(ctx);
      ctx[name] = (...a) => { log.push({op: name, screen: fb === null, n: 1}); return f(...a); };
    }
    if (ctx.drawArraysInstanced) {
      const a = ctx.drawArraysInstanced.bind(ctx);
      ctx.drawArraysInstanced = (m, f, c, n) => {
        log.push({op: 'inst', screen: fb === null, n}); drew(n); return a(m, f, c, n); };
      const e = ctx.drawElementsInstanced.bind(ctx);
      ctx.drawElementsInstanced = (m, c, t, o, n) => {
        log.push({op: 'inst', screen: fb === null, n}); drew(n); return e(m, c, t, o, n); };
    }
    if (ctx.blitFramebuffer) {
      const b = ctx.blitFramebuffer.bind(ctx);
      ctx.blitFramebuffer = (...a) => {
        if (fb === null && readFb !== null)
          log.push({op: 'blit', screen: true, n: pending.get(readFb) || 0});
        return b(...a); };
    }
    const getExt = ctx.getExtension.bind(ctx);
    ctx.getExtension = (name) => {
      const ext = getExt(name);
      if (ext && name === 'ANGLE_instanced_arrays' && !ext.__wrapped) {
        ext.__wrapped = true;
        const a = ext.drawArraysInstancedANGLE.bind(ext);
        ext.drawArraysInstancedANGLE = (m, f, c, n) => {
          log.push({op: 'inst', screen: fb === null, n}); drew(n); return a(m, f, c, n); };
        const e = ext.drawElementsInstancedANGLE.bind(ext);
        ext.drawElementsInstancedANGLE = (m, c, t, o, n) => {
          log.push({op: 'inst', screen: fb === null, n}); drew(n); return e(m, c, t, o, n); };
      }
      return ext;
    };
    return ctx;
  };
})();"""

LAST_FRAME_JS = """() => {
  const g = window.__gl; if (!g) return null;
  const screen = g.log.filter(e => e.screen);
  let frames = [], cur = null;
  for (const e of screen) {
    if (e.op === 'clear') { if (cur && cur.calls) frames.push(cur); cur = {inst: 0, plain: 0, calls: 0}; }
    else if (e.op === 'blit') {  // a whole frame drawn offscreen (multisampled) and blitted
      if (cur && cur.calls) frames.push(cur); cur = {inst: e.n, plain: 0, calls: 1}; }
    else { if (!cur) cur = {inst: 0, plain: 0, calls: 0};
           cur.calls += 1; if (e.op === 'inst') cur.inst += e.n; else cur.plain += 1; }
  }
  if (cur && cur.calls) frames.push(cur);
  return {contexts: g.contexts, kinds: g.kinds, frames: frames.length,
          last: frames.length ? frames[frames.length - 1] : null};
}"""  # noqa: E501  (a calibrated string, kept as it was scored)

PIXELS_JS = """(points) => {
  const c = document.querySelector('canvas#field'); if (!c) return null;
  const r = c.getBoundingClientRect();
  const k = document.createElement('canvas'); k.width = c.width; k.height = c.height;
  const x2 = k.getContext('2d'); x2.drawImage(c, 0, 0);
  const sx = c.width / r.width, sy = c.height / r.height;
  const img = x2.getImageData(0, 0, c.width, c.height).data;
  let h = 0; for (let i = 0; i < img.length; i += 97) h = (h * 31 + img[i]) | 0;
  const px = points.map(([x, y]) => { const X = Math.floor(x * sx), Y = Math.floor(y * sy);
    const o = (Y * c.width + X) * 4; return [img[o], img[o + 1], img[o + 2]]; });
  return {px, hash: h, css: [r.width, r.height], dev: [c.width, c.height]};
}"""

#: each row's ``data-currency`` (``#totals`` keys its rows by it)
CURRENCY_JS = """(sel) => Array.from(document.querySelectorAll(sel)).map(
  r => r.getAttribute('data-currency'))"""

SHOWN_JS = """(sel) => { const e = document.querySelector(sel); if (!e) return null;
  const vis = e.getClientRects().length > 0 && (!e.checkVisibility ||
    e.checkVisibility({opacityProperty: true, visibilityProperty: true}));
  return {visible: vis, text: e.innerText.trim()}; }"""

FEED_JS = """() => Array.from(document.querySelectorAll('#feed li')).map(
  li => ({seq: li.getAttribute('data-seq'), text: li.innerText.trim()}))"""


def table(page: Any, sel: str) -> list[dict[str, Any]]:
    """The rows of table ``sel`` as a user sees them (the app kit's rendered truth: a
    cell counts as shown only when its whole text is visible, not clipped by any
    ancestor, not covered, not hidden), with ``clipped`` per cell and ``currency``."""
    rows = rendered_rows(page, f"{sel} tbody tr")
    currencies = page.evaluate(CURRENCY_JS, f"{sel} tbody tr")
    for row, currency in zip(rows, currencies, strict=False):
        row["currency"] = currency
        row["clipped"] = [not shown for shown in row.get("shown") or []]
    return rows


def shown(page: Any, sel: str) -> dict[str, Any] | None:
    got = page.evaluate(SHOWN_JS, sel)
    return dict(got) if got else None


def feed(page: Any) -> list[dict[str, Any]]:
    return list(page.evaluate(FEED_JS))


def wait_js(page: Any, js: str, timeout_s: float, arg: Any = None) -> float | None:
    """Seconds until ``js`` held in the page, None when it never did."""
    from playwright.sync_api import Error as PlaywrightError

    start = time.monotonic()
    try:
        page.wait_for_function(js, arg=arg, timeout=timeout_s * 1000, polling=100)
    except PlaywrightError:
        return None
    return time.monotonic() - start


def open_console(page: Any, url: str, want_rows: int) -> dict[str, Any]:
    """Navigate; time until ``want_rows`` payment rows exist (first useful paint)."""
    from playwright.sync_api import Error as PlaywrightError

    out: dict[str, Any] = {}
    start = time.monotonic()
    try:
        resp = page.goto(url, wait_until="load", timeout=15000)
    except PlaywrightError as exc:
        out["error"] = str(exc).splitlines()[0]
        return out
    out["status"] = resp.status if resp else None
    out["ctype"] = resp.headers.get("content-type") if resp else None
    js = "(n) => document.querySelectorAll('#payments tbody tr').length >= n"
    painted = wait_js(page, js, 10.0, want_rows)
    out["paint_s"] = None if painted is None else round(time.monotonic() - start, 2)
    return out


def field_state(page: Any) -> dict[str, Any] | None:
    got = page.evaluate(LAST_FRAME_JS)
    return dict(got) if got else None


def pixels(page: Any, points: list[tuple[float, float]]) -> dict[str, Any] | None:
    got = page.evaluate(PIXELS_JS, [list(p) for p in points])
    return dict(got) if got else None


def canvas_box(page: Any) -> dict[str, float] | None:
    page.evaluate(
        "() => { const c = document.querySelector('canvas#field');"
        " if (c) c.scrollIntoView({block: 'center'}); }"
    )
    got = page.evaluate(
        "() => { const c = document.querySelector('canvas#field'); if (!c) return null;"
        " const r = c.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height}; }"  # noqa: E501  (a calibrated string, kept as it was scored)
    )
    return dict(got) if got else None


def digest(values: list[Any]) -> str:
    return hashlib.sha256(repr(values).encode()).hexdigest()[:16]
