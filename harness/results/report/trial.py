"""report.json's parts the trial adds around the verdict: goagentbench's run progress,
the toolchain that ran, containment, the sandbox policy, the budget, the app-scoring
slot and how workspace.diff came out. Fields are declared in the order they are written.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from harness.results.report.part import Number, Part


class TokenUsage(Part):
    """goagentbench's TokenUsage, from the gateway's measured usage."""

    input: int = Field(description="prompt tokens not served from a cache")
    cached_input: int = Field(description="prompt tokens served from a cache")
    write_cached_input: int = Field(description="always 0 (goagentbench's field)")
    output: int = Field(description="completion tokens")
    total: int = Field(description="prompt + completion tokens")
    cost: Number = Field(description="USD, as the gateway priced the calls")


class Progress(Part):
    """goagentbench's RunProgress: who ran, when, how long, at what usage."""

    run_id: str | None = Field(description="the run's id")
    scenario: str | None = Field(description="scenario name, <family>/<name>")
    agent: str | None = Field(description="agents.yml name of the agent")
    agent_version: str | None = Field(description="the agent's reported version")
    model: str | None = Field(description="llms.yml name of the model")
    started_at: str | None = Field(description="when the run started (ISO 8601, UTC)")
    updated_at: str = Field(description="when this record was made")
    ended_at: str | None = Field(description="when the last agent turn ended")
    duration_seconds: Number = Field(description="the agent turns' wall time, seconds")
    token_usage: TokenUsage = Field(description="tokens and cost over every turn")
    transcripts: list[str] = Field(description="always empty (goagentbench's field)")
    turns: int = Field(description="agent turns")


class Toolchain(Part):
    """The toolchain the verifier chose, why, and what actually ran (empty when nothing
    was graded)."""

    go: str | None = Field(default=None, description="the Go toolchain chosen")
    go_reason: str | None = Field(default=None, description="why that Go (go.mod, host)")
    go_modules: str | None = Field(default=None, description="the prepared module cache")
    python_wheels: str | None = Field(default=None, description="the prepared wheel folder")
    python: str | None = Field(default=None, description="the Python interpreter chosen")
    notes: list[str] = Field(default_factory=list, description="what provisioning noticed")
    ran: str | None = Field(
        default=None, description="`go env GOVERSION` or `python --version` as run"
    )


class Containment(Part):
    """What kept the verdict out of the code's reach (``verify/guard.py``)."""

    restored: list[str] = Field(description="runner-steering files put back before the tests")
    rejected: list[str] = Field(description="targets whose result was refused")
    test_user: str | None = Field(description="who the hidden tests ran as, enforced or not")


class SandboxPolicy(Part):
    """The agent sandbox's policy (the scenario's ``sandbox:`` keys) and what it relaxes,
    as run.json recorded it (a run.json of another harness version may hold fewer keys:
    the defaults are the default policy's)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    read_only_root: bool = Field(
        default=True, alias="read-only-root", description="root filesystem read-only"
    )
    no_new_privileges: bool = Field(
        default=True, alias="no-new-privileges", description="no setuid gains"
    )
    non_root: bool = Field(
        default=True, alias="non-root", description="the agent runs as a non-root user"
    )
    capabilities: list[str] = Field(default_factory=list, description="Linux capabilities kept")
    workspace_size: str = Field(
        default="4g", alias="workspace-size", description="the workspace's cap"
    )
    tmp_size: str = Field(default="1g", alias="tmp-size", description="/tmp's cap")
    home_size: str = Field(default="1g", alias="home-size", description="the home folder's cap")
    output_limit: str = Field(
        default="16m", alias="output-limit", description="the agent's output cap"
    )
    relaxed: list[str] = Field(default_factory=list, description="the defaults this policy relaxes")


class Budget(Part):
    """The trial's budget (only the limits set)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    tokens: int | None = Field(default=None, description="prompt + completion tokens")
    cost_usd: Number | None = Field(
        default=None, alias="cost-usd", description="USD, as the gateway prices it"
    )
    calls: int | None = Field(default=None, description="model calls sent upstream")


class ScoringSlot(Part):
    """The app-scoring slot: executed apps are scored one at a time per machine (empty
    when verification never asked for it: a trial stopped before grading)."""

    policy: str | None = Field(default=None, description="the slot's rule, or that no app ran")
    lock: str | None = Field(default=None, description="the lock file, when an app ran")
    waited_s: Number | None = Field(default=None, description="seconds waited for the slot")


class WorkspaceDiff(Part):
    """How ``workspace.diff`` came out (run.json's record, ``util.trialgit.DiffRecord``)."""

    status: str = Field(description="ok, truncated or failed")
    detail: str = Field(default="", description="why, when not ok")
    skipped: dict[str, str] = Field(
        default_factory=dict, description="path -> why it was not diffed"
    )
    bytes: int = Field(default=0, description="the diff's size")


__all__ = [
    "Budget",
    "Containment",
    "Progress",
    "SandboxPolicy",
    "ScoringSlot",
    "TokenUsage",
    "Toolchain",
    "WorkspaceDiff",
]
