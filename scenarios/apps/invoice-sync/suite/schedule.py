"""The SPEC's bounds and this era's fixtures and fault schedule, all drawn from the trial's seed."""

import itertools
import re
import unicodedata
from dataclasses import replace
from urllib.parse import parse_qs, urlsplit

from harness.appkit.fixtures import (
    CURRENCIES,
    EXPONENTS,
    MARKUP_NAMES,
    Dataset,
    Faults,
    Invoice,
    build_dataset,
)
from harness.appkit.seeding import between, derive_bytes, rng

# the SPEC's bounds, tested as they are written (timer slack only)
FIRST_PAUSE_S = 0.2  # at least 0.2 s before the first retry


GROWTH = 1.5  # each further pause at least 1.5x the previous one


PAUSE_CAP_S = 5.0  # the pause may be capped at 5 s


TIMEOUT_S = 6.0  # wait at least 6 s for an answer


# the backoff page's run: nine plain 503s (a 1.5x backoff from 0.2 s reaches the 5 s cap
# at its ninth pause: a cap anywhere below 5 s shows) and two carrying Retry-After, one of
# 1-3 s at a drawn position among the second to fourth and RETRY_AFTER_S last (never give
# up). The first is always plain: its retry is M-SYNC-3's evidence on every seed, blips or
# none (4.1.0 drew it among the first four, so on 3.4% of seeds, those with no blip page,
# no plain first retry existed and a right app failed M-SYNC-3).
BACKOFF_PLAIN = 9


RETRY_AFTER_SMALL = (1, 3)  # seconds, drawn per seed


RETRY_AFTER_S = 6  # one second past the backoff's 5 s cap: Retry-After is not capped


SLOW_S = (7.0, 7.5)  # the 4.1 slow answer's range (a hedge after 6.5 s shows)


#: the slow page's two slow answers (4.2): its first ask answers a 503 slowly, its retry
#: a 200 slowly, one of them drawn from each range (which one, per seed): any timeout or
#: hedge from 6 s to 8.3 s shows on every seed (its retry comes 0.2 s after it), one up
#: to 9.8 s on some; a timeout kept short only on a retry (or only on a first ask) shows
SLOW_RANGES = ((7.0, 8.5), (8.5, 10.0))


#: how long a slow 503 takes to arrive (drawn per 503): a pause or a Retry-After counted
#: from the send, not from the answer, comes short by that much
SLOW_503_S = (0.3, 1.5)


SLOW_503_MORE = 2  # slow 503s drawn in the backoff run besides its first and small Retry-After


GIVE_UP_SLACK_S = 0.05  # a client's 6 s timer starts a little after the ask arrived


RESETS = (1, 2)  # the reset page's first asks closed without an answer (drawn)


BULK = (460, 500)  # plain invoices added on one early page: more than 500 in all


#: characters a URL gives a meaning to: a cursor pasted into the query unencoded names
#: another page (the mock decodes the query as any server does)
RESERVED = "+/=&% ?#;"


#: customer names over the range the SPEC allows ("arbitrary text"): surrounding spaces,
#: 300 characters, one long unbroken word (a fixed layout clips it), non-Latin scripts
UNBROKEN = "accounts.payable.receivables.international.subsidiaries.holding"


WORDS = (
    "Northern",
    "Consolidated",
    "Amalgamated",
    "Trading",
    "Holdings",
    "Partners",
    "Logistics",
    "International",
    "Engineering",
    "Services",
    "Group",
    "Limited",
)


#: text over the range "arbitrary text" allows, beyond Latin-1 and the BMP: every
#: character here shows in a browser cell exactly as it is in the string (no whitespace
#: a browser collapses other than ASCII spaces, no controls)
MULTIBYTE = (
    "Société",
    "Zürich",
    "東京",
    "株式会社",
    "Ελλάς",
    "Москва",
    "شركة",
    "חברה",
    "서울",
    "€uro",
    "“Quoted”",
    "🧾",
    "𠮷野家",
    "👩‍👩‍👧",
    "🇯🇵",
    "❤️",
    "\U0001d504\U0001d51f\U0001d520",  # Fraktur
    "क्षेत्र",
)


#: names whose canonical composed form (NFC) is another string: each goes in as drawn
#: and once more in the other normal form (NFD), so a store that normalises either way
#: alters one of them
COMPOSABLE = (
    "Café Zéro",
    "Crème Brûlée SARL",
    "Hồ Chí Minh Trading",
    "Ångström Åkesson",
    "Señor Ñandú",
    "한국 무역",
)


#: names a normalisation changes although they are neither composed nor decomposed:
#: singletons (ANGSTROM SIGN, OHM SIGN), marks out of canonical order, compatibility
#: characters (ligature, fullwidth, circled, superscript: NFKC), conjoining jamo,
#: right-to-left text with a mark, zero-width (non-)joiners, combining marks
UNICODE_NAMES = (
    "\u212bsa \u2126hm Instruments",
    "Dra\u0301\u0323gon Mo\u0308\u0331ller",
    "\ufb01nance \uff34\uff4f\uff4b\uff59\uff4f \u2460 m\u00b2",
    "\u1112\u1161\u11ab\u1100\u116e\u11a8 \ud55c\uad6d",
    "شركة الخليج \u200fחברת אלף",
    "Z\u0324\u0308a\u0300\u0301l\u0327go \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
    "🧾 Receipts 👩\u200d👩\u200d👧 🇯🇵 ❤\ufe0f",
    "𠮷野家 \U0001d504\U0001d51f\U0001d520 Holdings",
    "€ 1 Café \u2019s “Quoted” — Œuvre",
    "Москва Ελλάς İstanbul \u0131 straße",
)


EMPTY_PAGES = (1, 2)  # pages with "data": [] and a next cursor, mid-stream (drawn)


CASE_TWINS = 2  # invoices whose id differs from another's only by letter case


def _long_name(seed: str) -> str:
    """300 characters of words drawn from the seed (a VARCHAR(200) habit cuts it)."""
    words = rng(seed, "invoice-sync:4.1:long-name").sample(WORDS, len(WORDS))
    text = " ".join(itertools.islice(itertools.cycle(words), 60))[:300]
    return text[:-1] + "s" if text.endswith(" ") else text


def special_names(seed: str) -> tuple[str, ...]:
    """The names plain invoices get: padded, long, unbroken, non-Latin, a composable
    name in both normal forms (which one comes first drawn), the names a normalisation
    changes, and multibyte text drawn into a few more."""
    r = rng(seed, "invoice-sync:4.2:names")
    pair = [unicodedata.normalize("NFC", n) for n in r.sample(COMPOSABLE, 2)]
    forms = [(n, unicodedata.normalize("NFD", n)) for n in pair]
    drawn = [(a, b) if r.random() < 0.5 else (b, a) for a, b in forms]
    mixed = [" ".join(r.sample(MULTIBYTE, 3)) for _ in range(3)]
    return (
        "  Padded Ltd  ",
        _long_name(seed),
        UNBROKEN,
        "Société Générale — 東京 株式会社",
        *(name for both in drawn for name in both),
        *UNICODE_NAMES,
        *mixed,
    )


#: the whitespace a browser collapses (CSS white-space: normal): ASCII only, never
#: NBSP or other Unicode spaces (Python's str.split would collapse those too)
_CSS_SPACE = re.compile("[ \t\n\f\r]+")


def shown(customer: str) -> str:
    """How a cell shows a name: the browser collapses runs of ASCII spaces and trims."""
    return _CSS_SPACE.sub(" ", customer).strip(" ")


def dataset(seed: str) -> Dataset:
    """The app kit's fixtures with this era's overlaps, names, zeros, cursors and bulk.

    Each overlap repeats an invoice drawn from *any* earlier position (not only the
    previous page's last one) at a drawn position of the next page: a store that lets a
    repeat replace the first copy moves it. One plain invoice in each exponent is worth
    0 (``0``, ``0.00``, ``0.000``). Plain invoices get the names of ``special_names``;
    every cursor carries characters reserved in URLs; one early page carries 460-500
    more plain invoices (more than 500 in all: no paging, no cap), each name with
    multibyte text. Over the range of the SPEC's opaque ids and pages (4.2): invoices
    whose ids differ from another's only by letter case (``case_twins``), a page of
    repeats only before the kill page and one or two pages with ``"data": []`` and a
    next cursor (``empty_pages``), away from the pages the write kill may hit.
    """
    base = build_dataset(seed)
    pages = [list(p) for p in base.pages]
    for p in base.faults.duplicate_pages:
        pages[p + 1].pop(0)  # the kit's overlap: the previous page's last invoice
    r = rng(seed, "invoice-sync:4.1:plain")
    plain = [
        inv
        for inv in base.invoices
        if 0 < inv.amount_minor < 2**53 and inv.customer not in MARKUP_NAMES
    ]
    r.shuffle(plain)
    swap: dict[str, Invoice] = {}
    for exp in (0, 2, 3):
        zero = next(i for i in plain if EXPONENTS[i.currency] == exp and i.id not in swap)
        swap[zero.id] = replace(zero, amount_minor=0)
    named = [i for i in plain if i.id not in swap]
    names = special_names(seed)
    for inv, name in zip(named, names, strict=False):
        swap[inv.id] = replace(inv, customer=name)
    pages = [[swap.get(inv.id, inv) for inv in page] for page in pages]
    r = rng(seed, "invoice-sync:4:overlaps")
    for p in base.faults.duplicate_pages:
        earlier = [inv for page in pages[: p + 1] for inv in page][:-1] or pages[p]
        pages[p + 1].insert(r.randint(0, len(pages[p + 1])), r.choice(earlier))
    r = rng(seed, "invoice-sync:4.1:bulk")
    codes = [code for code, _ in CURRENCIES]
    bulk = [
        Invoice(
            "inv_" + derive_bytes(seed, f"invoice-sync:4.1:bulk:{i}").hex()[:12],
            f"{r.choice(WORDS)} {r.choice(MULTIBYTE)} {i}",
            codes[i % len(codes)],
            r.randint(-(10**6), 10**9),
        )
        for i in range(between(seed, "invoice-sync:4.1:bulk-count", *BULK))
    ]
    pages[r.randrange(base.faults.kill_page)] += bulk
    _case_twins(seed, pages, named[len(names) :])
    pages, cursors, faults = _extra_pages(seed, pages, list(base.cursors), base.faults)
    invoices = {inv.id: inv for page in pages for inv in page}  # first received order
    cursors = [None if c is None else _reserved(seed, c) for c in cursors]
    return Dataset(tuple(invoices.values()), tuple(tuple(p) for p in pages), tuple(cursors), faults)


def _case_twins(seed: str, pages: list[list[Invoice]], free: list[Invoice]) -> None:
    """Add CASE_TWINS invoices whose ids are others' with letters in the other case (all
    of them, or one drawn), each at a drawn position of a drawn page: a store that
    compares ids without case keeps one of the two."""
    r = rng(seed, "invoice-sync:4.2:case-twins")
    codes = [code for code, _ in CURRENCIES]
    lettered = [inv for inv in free if any(c.isalpha() for c in inv.id[4:])]
    for n, inv in enumerate(r.sample(lettered, CASE_TWINS)):
        tail = inv.id[4:]
        if n % 2 == 0:
            tail = tail.upper()
        else:
            at = r.choice([i for i, c in enumerate(tail) if c.isalpha()])
            tail = tail[:at] + tail[at].upper() + tail[at + 1 :]
        twin = Invoice(
            "inv_" + tail,
            f"{r.choice(WORDS)} {r.choice(MULTIBYTE)} twin",
            r.choice(codes),
            r.randint(1, 10**7),
        )
        page = r.choice(pages)
        page.insert(r.randint(0, len(page)), twin)


def empty_positions(seed: str, faults: Faults, n: int) -> tuple[int, ...]:
    """Where the empty pages go, as indices of the kit's pages they come before: before
    the kill page (the first life) or after the first fault page, never between the kill
    page and the first fault page (where ``write_kill_page`` is drawn) and never last."""
    first_fault = min(faults.backoff_page, faults.retry_after_page, faults.slow_page)
    allowed = [*range(faults.kill_page + 1), *range(first_fault + 1, n)]
    r = rng(seed, "invoice-sync:4.2:empty-pages")
    count = between(seed, "invoice-sync:4.2:empty-count", *EMPTY_PAGES)
    return tuple(sorted(r.choice(allowed) for _ in range(count)))


def _extra_pages(
    seed: str, pages: list[list[Invoice]], cursors: list[str | None], faults: Faults
) -> tuple[list[list[Invoice]], list[str | None], Faults]:
    """Insert the empty pages and, before the kill page, a page of repeats only (1-4
    invoices drawn from the pages before it); every fault page index moves with them."""
    n = len(pages)
    inserts = [(k, "empty") for k in empty_positions(seed, faults, n)]
    r = rng(seed, "invoice-sync:4.2:repeats-page")
    at = r.randint(1, faults.kill_page)
    inserts.append((at, "repeats"))
    earlier = [inv for page in pages[:at] for inv in page]
    repeats = r.sample(earlier, r.randint(1, 4))
    out: list[list[Invoice]] = []
    curs: list[str | None] = []
    moved: dict[int, int] = {}
    for i in range(n):
        for k, kind in sorted(inserts):
            if k == i:
                out.append(list(repeats) if kind == "repeats" else [])
                curs.append(None)
        moved[i] = len(out)
        out.append(pages[i])
        curs.append(cursors[i])
    for j in range(1, len(out)):
        if curs[j] is None:
            curs[j] = "c" + derive_bytes(seed, f"invoice-sync:4.2:cursor:{j}").hex()[:16]
    curs[0] = None
    shifted = Faults(
        kill_page=moved[faults.kill_page],
        slow_page=moved[faults.slow_page],
        backoff_page=moved[faults.backoff_page],
        retry_after_page=moved[faults.retry_after_page],
        duplicate_pages=tuple(moved[p] for p in faults.duplicate_pages),
    )
    return out, curs, shifted


def _reserved(seed: str, cursor: str) -> str:
    """The kit's cursor with three reserved characters drawn into its middle."""
    r = rng(seed, f"invoice-sync:4.1:cursor:{cursor}")
    return cursor[:6] + "".join(r.sample(RESERVED, 3)) + cursor[6:]


def cursor_in(raw_path: str) -> str | None:
    """The cursor a request names, as the mock (any server) decodes its query."""
    return parse_qs(urlsplit(raw_path).query).get("cursor", [None])[0] or None


def backoff_schedule(seed: str) -> tuple[int, dict[int, int]]:
    """The backoff page's run of 503s: its length and the Retry-After (seconds) each
    carrying one asks for, by position (1 is the first 503)."""
    small = between(seed, "invoice-sync:4.1:ra-small-at", 2, 4)
    run = BACKOFF_PLAIN + 2
    return run, {
        small: between(seed, "invoice-sync:4.1:ra-small", *RETRY_AFTER_SMALL),
        run: RETRY_AFTER_S,
    }


def _draw(seed: str, label: str, low: float, high: float) -> float:
    return round(low + (high - low) * rng(seed, label).random(), 2)


def slow_delays(seed: str) -> tuple[float, float]:
    """The slow page's slow 503 (its first ask) and slow 200 (its retry), in seconds."""
    low, high = (
        _draw(seed, f"invoice-sync:4.2:slow:{i}", *bounds) for i, bounds in enumerate(SLOW_RANGES)
    )
    return (high, low) if rng(seed, "invoice-sync:4.2:slow-order").random() < 0.5 else (low, high)


def slow_delay(seed: str) -> float:
    """The slow page's 200 (asked again after its slow 503)."""
    return slow_delays(seed)[1]


def slow_503s(seed: str, blips: tuple[int, ...] = ()) -> dict[tuple[int, int], float]:
    """The 503s that take a while to arrive, by (page, n-th 503 of it): the backoff page's
    first (M-SYNC-3 on every seed) and its small Retry-After (M-SYNC-5), ``SLOW_503_MORE``
    more of its run, and about half of the blips (a few stay prompt). The backoff page is
    named -1 here (``Upstream`` maps it)."""
    run, retry_afters = backoff_schedule(seed)
    small = min(retry_afters)
    r = rng(seed, "invoice-sync:4.2:slow-503-at")
    others = [n for n in range(2, run + 1) if n != small]
    at = {(-1, n) for n in (1, small, *r.sample(others, SLOW_503_MORE))}
    at |= {(b, 1) for b in blips if r.random() < 0.5}
    return {
        key: _draw(seed, f"invoice-sync:4.2:slow-503:{key[0]}:{key[1]}", *SLOW_503_S)
        for key in sorted(at)
    }


#: --upstream's path (4.2): the SPEC asks ``GET {URL}/v1/invoices``, and a URL with a path
#: is a URL; the mock serves under it and answers 404 elsewhere
BASE_WORDS = ("api", "upstream", "billing", "v2", "ledger", "gateway", "svc", "eu-west")


def base_path(seed: str) -> str:
    """A drawn path of 1-3 segments, no trailing slash (e.g. ``/billing/api``)."""
    r = rng(seed, "invoice-sync:4.2:base-path")
    words = r.sample(BASE_WORDS, r.randint(1, 3))
    words[-1] += "-" + derive_bytes(seed, "invoice-sync:4.2:base-tail").hex()[:4]
    return "".join("/" + w for w in words)


def resets(seed: str) -> int:
    return between(seed, "invoice-sync:4.1:resets", *RESETS)


def blip_pages(ds: Dataset) -> tuple[int, ...]:
    """The pages after the kill page that carry no other fault: each answers one plain
    503 (no Retry-After) the first time it is asked, whatever the life."""
    f = ds.faults
    other = {f.backoff_page, f.retry_after_page, f.slow_page}
    return tuple(p for p in range(f.kill_page + 1, len(ds.pages)) if p not in other)


def escaped_page(seed: str, ds: Dataset) -> int:
    """The one page the mock sends with ``\\u`` escapes (ASCII JSON); the others carry
    their text as raw UTF-8."""
    return between(seed, "invoice-sync:4.2:escaped-page", 0, len(ds.pages) - 1)


def write_kill_page(seed: str, faults: Faults) -> int:
    """The page after whose answer the app's first file write is killed (second life):
    drawn between the kill page and the first fault page, so the lives after it still
    meet every fault and the browser watches them."""
    first_fault = min(faults.backoff_page, faults.retry_after_page, faults.slow_page)
    return between(seed, "invoice-sync:4:write-kill", faults.kill_page + 1, first_fault)


#: start-up kills: after each of a start's first writes and right before each of its
#: last (where a start sets a mark, swaps a table or renames a file into place), then
#: after one write drawn in each of STARTUP_SPREAD equal slices of the rest: a window
#: of danger at either end or covering a slice is met on every seed, a shorter one in
#: the middle on some
STARTUP_FIRST = 3


STARTUP_LAST = 3


STARTUP_SPREAD = 6


def startup_kill_points(seed: str, writes: int) -> list[int]:
    """After which of a start's ``writes`` file writes (1-based) the start is killed,
    ascending.

    ``writes`` is what a start made when nothing stopped it; later starts may make fewer
    (a kill that lost data leaves less to do), and the kills stop at the first start that
    does not reach its point."""
    first = set(range(1, min(writes, STARTUP_FIRST) + 1))
    last = {writes - k for k in range(1, STARTUP_LAST + 1) if writes - k > 0}
    low_end, high_end = STARTUP_FIRST + 1, writes - STARTUP_LAST - 1
    rest = high_end - low_end + 1
    draw = rng(seed, "invoice-sync:4.2:startup-kills")
    spread = set()
    for k in range(STARTUP_SPREAD if rest > 0 else 0):
        low = low_end + rest * k // STARTUP_SPREAD
        high = low_end + rest * (k + 1) // STARTUP_SPREAD - 1
        if high >= low:
            spread.add(draw.randint(low, high))
    return sorted(first | last | spread)
