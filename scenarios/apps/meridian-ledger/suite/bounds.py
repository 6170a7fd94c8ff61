"""The SPEC's bounds the checks hold the app to and the fixed inputs the run sends.

The console's page size, the optimal first walk, the backoff schedule and attempts, the
small load and its latency, the invalid queries and drafts, the valid drafts at the
SPEC's bounds, and what the README must name.
"""

from __future__ import annotations

from typing import Any

from .vendor_model import ERROR_REPEATS, PAGES

CONSOLE_PAGE = 100
#: every page once, the failed attempts (a drop, a 429, five 500s) and the killed request
OPTIMAL_WALK = PAGES + 2 + ERROR_REPEATS + 1
BACKOFF_MIN_S = 0.2  # SPEC 3.1 rule 2: at least 0.2 s before the first retry
BACKOFF_FACTOR = 1.5  # ... each further pause at least 1.5 times the previous one
BACKOFF_CAP_S = 2.0  # ... capped at no less than 2 s
MIN_ATTEMPTS = 6
LOAD_REQUESTS = 40
LATENCY_OK_S, LATENCY_ZERO_S = 1.0, 3.0
BAD_QUERIES = (
    "currency=GBP",
    "currency=eur",
    "status=paid",
    "day=2026-02-30",
    "day=29.03.2026",
    "per_page=0",
    "per_page=501",
    "page=0",
    "page=abc",
)
BAD_DRAFTS: tuple[Any, ...] = (
    {"amount_minor": 12.5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": "1000", "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": -5, "currency": "EUR", "counterparty": "Acme"},
    {"amount_minor": 0, "currency": "USD", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "GBP", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "JPY", "counterparty": ""},
    {"amount_minor": 100, "currency": "JPY", "counterparty": "x" * 81},
    {"amount_minor": True, "currency": "KWD", "counterparty": "Acme"},
    {"amount_minor": 10**18 + 1, "currency": "USD", "counterparty": "Acme"},
    {"amount_minor": 100, "currency": "EUR", "counterparty": "    "},
    [1, 2, 3],
    "not json",
)
#: valid drafts at the SPEC's bounds: counterparty trimmed (80 characters after it), 10**18
DRAFT_A = {"amount_minor": 4_200_123, "currency": "KWD", "counterparty": "  Quay <i>Hold</i> BV "}
DRAFT_B = {"amount_minor": 987_654_321, "currency": "JPY", "counterparty": "Kiosk Oy"}
DRAFT_C = {"amount_minor": 1_005, "currency": "EUR", "counterparty": "Late & Co"}
DRAFT_D = {
    "amount_minor": 10**18,
    "currency": "KWD",
    "counterparty": "  " + "Abc & Co " * 8 + "Quay BV! ",
}
README_NEEDS = (
    "python -m ledgerd",
    "--port",
    "--db-dir",
    "--vendor",
    "--tokens-file",
    "/api/payments",
    "/api/summary",
    "/api/drafts",
    "/webhooks/vendor",
)
