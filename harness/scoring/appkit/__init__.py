"""App-execution kit: run a built app, drive it against a seeded mock, look at it.

The swarm-bench lineage scores build-from-spec apps by *executing* them. This package
holds the pieces a scenario's suite composes: seed derivation (``seeding``), process
control with SIGKILL/respawn (``procs``), a seeded mock dependency that writes a JSONL
trace (``mockdep``) and a headless-browser probe (``browser``).
"""

from harness.scoring.appkit.browser import BrowserUnavailable, PageProbe, probe_page
from harness.scoring.appkit.fetch import Fetched, get, poll, tbody_rows
from harness.scoring.appkit.fixtures import Dataset, Invoice, build_dataset, format_minor
from harness.scoring.appkit.mockdep import MockUpstream
from harness.scoring.appkit.procs import AppNotHealthy, AppProcess
from harness.scoring.appkit.seeding import between, derive, derive_bytes, pick, rng

__all__ = [
    "AppNotHealthy",
    "AppProcess",
    "BrowserUnavailable",
    "Dataset",
    "Fetched",
    "Invoice",
    "MockUpstream",
    "PageProbe",
    "between",
    "build_dataset",
    "derive",
    "derive_bytes",
    "format_minor",
    "get",
    "pick",
    "poll",
    "probe_page",
    "rng",
    "tbody_rows",
]
