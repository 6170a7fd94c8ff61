"""App-execution kit: run a built app, drive it against a seeded mock, look at it.

The swarm-bench lineage scores build-from-spec apps by *executing* them. This package
holds the pieces a scenario's suite composes: seed derivation (``seeding``), the app's
confinement away from the evidence (``jail``), process control with SIGKILL/respawn
(``procs``), a seeded mock dependency that writes a timed JSONL trace (``mockdep``), a
headless-browser probe of the rendered page with a small journey helper (``browser``),
the machine-wide app-scoring slot (``slot``), a traced loopback server for a suite's own
mocks and relays (``traced``), payment-domain helpers (``payments``: money strings,
local days, webhook signatures) and grading helpers (``grading``).
"""

from harness.appkit.browser import (
    BrowserUnavailable,
    Journey,
    PageProbe,
    browser_session,
    probe_page,
)
from harness.appkit.fetch import Called, Fetched, call, get, poll, tbody_rows
from harness.appkit.fixtures import Dataset, Invoice, build_dataset, format_minor
from harness.appkit.jail import Jail, protecting
from harness.appkit.mockdep import MockUpstream
from harness.appkit.procs import AppNotHealthy, AppProcess
from harness.appkit.seeding import between, derive, derive_bytes, pick, rng
from harness.appkit.slot import scoring_slot
from harness.appkit.traced import TracedServer

__all__ = [
    "AppNotHealthy",
    "AppProcess",
    "BrowserUnavailable",
    "Called",
    "Dataset",
    "Fetched",
    "Invoice",
    "Jail",
    "Journey",
    "MockUpstream",
    "PageProbe",
    "TracedServer",
    "between",
    "browser_session",
    "build_dataset",
    "call",
    "derive",
    "derive_bytes",
    "format_minor",
    "get",
    "pick",
    "poll",
    "probe_page",
    "protecting",
    "rng",
    "scoring_slot",
    "tbody_rows",
]
