"""What one execution of the app leaves for the checks (``Evidence``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.appkit.fetch import Called as Call
from harness.appkit.fetch import Fetched


@dataclass
class Evidence:
    """Everything one execution of the app produced, for the checks to grade."""

    dataset: Any
    evidence_dir: Path
    readme: str = ""
    confinement: str = ""
    healthy: bool = False
    health_detail: str = ""
    first_health: Fetched | None = None
    first_health_after_hold: bool = False  # the boot ask fell in the page hold: asked again
    health_during_sync: Fetched | None = None
    health_stalls: list[str] = field(default_factory=list)
    killed_mid_sync: bool = False
    resume_from: tuple[int, ...] = ()  # the pages a correct restart may continue from
    respawn_error: str | None = None
    status: Any = None
    listing: list[dict[str, Any]] | None = None
    listing_text: str = ""
    listing_detail: str = ""
    paged: list[dict[str, Any]] | None = None
    paged_total: Any = None
    filters: dict[str, tuple[list[str] | None, list[str]]] = field(default_factory=dict)
    summary: Any = None
    bad_queries: dict[str, int | None] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    resync: Call | None = None
    second_post: Call | None = None
    during_hold: Fetched | None = None
    resync_status: Any = None
    draft_calls: dict[str, Call] = field(default_factory=dict)
    drafts_after_bad: Any = None
    draft_a: str | None = None
    draft_b: str | None = None
    draft_c: str | None = None
    draft_d: str | None = None
    drafts_before_down: list[str] = field(default_factory=list)
    drafts_restored: Any = None
    approve_c_api: Call | None = None
    console: dict[str, Any] = field(default_factory=dict)
    console_html: str = ""
    approve_click: dict[str, Any] = field(default_factory=dict)
    approve_a_again: Call | None = None
    held_create: bool = False
    approval_kill_error: str | None = None
    draft_b_after: Any = None
    down_error: str | None = None
    down_boot_s: float | None = None
    down_status: Any = None
    restored: list[dict[str, Any]] | None = None
    down_console: dict[str, Any] = field(default_factory=dict)
    draft_c_after: Any = None
    probe_error: str | None = None
    sqlite_files: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    creations: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def pages(self, *phases: str) -> list[dict[str, Any]]:
        return [r for r in self.trace if r.get("kind") == "page" and r["phase"] in phases]

    def page_requests(self, page: int) -> list[dict[str, Any]]:
        return [r for r in self.pages("initial-sync", "after-respawn") if r.get("page") == page]
