"""Shared agent-adapter machinery: exit classification, staging, one run with a fake sandbox.

Also holds ``addresses`` and ``pinned``, which each ``test_<name>.py`` uses to check
that an invocation names no address but the gateway and that an image installs the pin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.agents.base import AgentContext
from harness.agents.common import (
    AGENT_DIR,
    Invocation,
    classify_exit,
    json_events,
    parse_version,
    program_missing,
    run_invocation,
    stage_files,
    tail,
    task_text,
)
from harness.config.entrants import LLMEntry
from harness.errors import UserError
from harness.sandbox.base import ExecResult, SandboxSpec
from harness.scenario.load import load_scenario
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

GATEWAY = "http://harness-gw-1a2b:8080/v1"
KEY = "hk-trialkey0123456789"
URL_RE = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'`,)}\]]+")
DOMAIN_RE = re.compile(r"\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|ai|io|dev|org|net|sh|co)\b")


def addresses(inv: Invocation) -> set[str]:
    """Every URL and domain-like name in an invocation's argv, env and files."""
    texts = [*inv.argv, *inv.env.values(), *inv.files.values(), *inv.files.keys()]
    found: set[str] = set()
    for text in texts:
        found.update(URL_RE.findall(text))
        found.update(DOMAIN_RE.findall(URL_RE.sub("", text)))
    return found


def assert_only_gateway(inv: Invocation, gateway: str = GATEWAY) -> None:
    """The gateway (or its scheme://host:port) is the only address the agent is given."""
    origin = gateway.rsplit("/v1", 1)[0]
    for address in addresses(inv):
        assert address.startswith(origin), f"{address!r} is not the gateway"
    assert any(origin in text for text in [*inv.argv, *inv.env.values(), *inv.files.values()])


def pinned(agent: str) -> str:
    """The version the shipped agents.yml pins for ``agent``."""
    entries = yaml.safe_load((REPO_ROOT / "agents.yml").read_text())["agents"]
    return next(str(e["version"]) for e in entries if e["name"] == agent)


def dockerfile_body(image: str) -> list[str]:
    """The instructions of an image's Dockerfile, comments dropped."""
    text = (REPO_ROOT / "images" / image / "Dockerfile").read_text()
    return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def assert_image_pins(image: str, package: str, agent: str, sep: str = "==") -> None:
    """Both variants of the image install exactly the agents.yml pin, the same way."""
    body = "\n".join(dockerfile_body(image))
    assert f'"{package}{sep}{pinned(agent)}"' in body
    assert dockerfile_body(image) == dockerfile_body(f"{image}-go")
    assert "env-go" in (REPO_ROOT / "images" / f"{image}-go" / "image.yml").read_text()
    assert "env-python" in (REPO_ROOT / "images" / image / "image.yml").read_text()


# ---- classification -----------------------------------------------------------------------
CONTEXT = "context_window_exceeded"


@pytest.mark.parametrize(
    ("code", "timed_out", "output", "expected"),
    [
        (0, False, "all done\n", "completed"),
        (None, True, "working...\n", "timeout"),
        (1, False, "litellm.ContextWindowExceededError: too long\n", CONTEXT),
        (0, False, "Your input exceeds the context window of this model", CONTEXT),
        (1, False, "error: This model's maximum context length is 32768 tokens", CONTEXT),
        (1, False, "litellm.RateLimitError: 429 Too Many Requests\n", "rate_limited"),
        (1, False, "exceeded retry limit, last status: 429 Too Many Requests", "rate_limited"),
        (0, False, "retrying after rate limit... ok, finished\n", "completed"),
        (2, False, "Traceback (most recent call last):\nKeyError: 'x'\n", "crashed"),
    ],
)  # fmt: skip
def test_classify_exit(code: int | None, timed_out: bool, output: str, expected: str) -> None:
    exit_, detail = classify_exit(code, timed_out, output)
    assert exit_ == expected
    assert detail


def test_crash_detail_is_the_tail_of_the_output() -> None:
    output = "\n".join(f"line {i}" for i in range(200)) + "\nValueError: boom\n"
    exit_, detail = classify_exit(1, False, output)
    assert exit_ == "crashed"
    assert detail.startswith("exit 1 | ")
    assert detail.endswith("ValueError: boom")
    assert "line 10\n" not in detail


def test_only_the_end_of_a_long_output_is_scanned() -> None:
    early = "the model quoted: maximum context length exceeded\n"
    exit_, _ = classify_exit(0, False, early + "x" * 20000)
    assert exit_ == "completed"


def test_status_counts_before_the_output() -> None:
    assert classify_exit(1, False, "bye", status="RateLimitError")[0] == "rate_limited"


def test_tail_limits_lines_and_chars() -> None:
    assert tail("a\nb\nc\n", lines=2) == "b\nc"
    assert len(tail("x" * 10000, chars=50)) == 50


def test_json_events_skip_other_lines() -> None:
    out = 'banner\n{"type": "a"}\n{broken\n[1]\n{"type": "b", "n": 1}\n'
    assert json_events(out) == [{"type": "a"}, {"type": "b", "n": 1}]


def test_parse_version() -> None:
    assert parse_version("codex-cli 0.171.0\n", r"codex-cli (\d+(?:\.\d+)+)") == "0.171.0"
    assert parse_version("nothing", r"(\d+\.\d+)") is None


# ---- staging and one run ------------------------------------------------------------------
def test_stage_files_refuses_paths_outside_the_agent_dir(tmp_path: Path) -> None:
    root = stage_files({f"{AGENT_DIR}/a/b.txt": "hi"}, tmp_path)
    assert (root / "a" / "b.txt").read_text() == "hi"
    assert (root / "home").is_dir()
    with pytest.raises(ValueError):
        stage_files({"/workspace/config.toml": "x"}, tmp_path / "again")


@dataclass
class FakeSandbox:
    """Records what an adapter asks of its sandbox; plays a CLI's result back."""

    result: ExecResult
    produced: dict[str, str] = field(default_factory=dict)  # sandbox path -> file text
    spec: SandboxSpec = field(default_factory=lambda: SandboxSpec(phase="agent"))
    calls: list[tuple[str, Any]] = field(default_factory=list)
    staged: dict[str, str] = field(default_factory=dict)

    @property
    def project_dir(self) -> str:
        return "/workspace"

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        self.calls.append(("exec", {"cmd": cmd, "cwd": cwd, "env": env, "timeout": timeout}))
        return self.result if cmd[0] != "rm" else ExecResult(0, "", "", 0.0)

    def copy_in(self, src: Path, dest: str) -> None:
        self.calls.append(("copy_in", dest))
        for path in Path(src).rglob("*"):
            if path.is_file():
                self.staged[f"{dest}/{path.relative_to(src).as_posix()}"] = path.read_text()

    def copy_out(self, src: str, dest: Path, max_bytes: int | None = None) -> None:
        self.calls.append(("copy_out", src))
        if src not in self.produced:
            raise FileNotFoundError(src)
        dest.write_text(self.produced[src])


def make_ctx(tmp_path: Path, sandbox: Any, scenario: str = "smoke/py-fast") -> AgentContext:
    loaded = load_scenario(scenario, REPO_ROOT / "scenarios")
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return AgentContext(
        scenario=loaded,
        workspace=tmp_path / "ws",
        sandbox=sandbox,
        model=LLMEntry(name="qwen3-coder-30b", model="qwen/qwen3-coder-30b", local=True),
        seed="1",
        out_dir=out,
        timeout_s=123.0,
        gateway_url=GATEWAY,
        api_key=KEY,
        instructions=loaded.scenario.agent.instructions,
    )


def test_run_invocation_stages_runs_with_timeout_and_collects(tmp_path: Path) -> None:
    sandbox = FakeSandbox(
        ExecResult(0, "out text", "err text", 1.0), produced={f"{AGENT_DIR}/t.json": "{}"}
    )
    ctx = make_ctx(tmp_path, sandbox)
    inv = Invocation(
        argv=["tool", "--go"],
        env={"A": "1"},
        files={f"{AGENT_DIR}/cfg.toml": "x = 1"},
        transcripts={f"{AGENT_DIR}/t.json": "t.json", f"{AGENT_DIR}/gone": "gone"},
        cleanup=[".cache-dir"],
    )
    result = run_invocation(ctx, inv)
    assert result.exit == "completed"
    assert sandbox.staged[f"{AGENT_DIR}/cfg.toml"] == "x = 1"
    run = next(c[1] for c in sandbox.calls if c[0] == "exec")
    assert run == {
        "cmd": ["tool", "--go"],
        "cwd": "/workspace",
        "env": {"A": "1"},
        "timeout": 123.0,
    }
    assert ("exec", {"cmd": ["rm", "-rf", "--", ".cache-dir"], "cwd": None, "env": None,
                     "timeout": 60}) in sandbox.calls  # fmt: skip
    assert (ctx.out_dir / "stdout.txt").read_text() == "out text"
    assert (ctx.out_dir / "stderr.txt").read_text() == "err text"
    assert (ctx.out_dir / "t.json").read_text() == "{}"
    assert not (ctx.out_dir / "gone").exists()


def test_run_invocation_timeout(tmp_path: Path) -> None:
    sandbox = FakeSandbox(ExecResult(None, "partial", "", 123.0, timed_out=True))
    result = run_invocation(make_ctx(tmp_path, sandbox), Invocation(argv=["x"], env={}))
    assert result.exit == "timeout"
    assert result.returncode is None


def test_task_text_points_at_the_spec(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, FakeSandbox(ExecResult(0, "", "", 0)), "py/ledger-rounding")
    ctx.instructions = "Fix the ledger."
    assert "SPEC.md" in task_text(ctx)
    ctx.instructions = "Fix the ledger as SPEC.md says."
    assert task_text(ctx).count("SPEC.md") == 1


def test_no_gateway_is_refused(tmp_path: Path) -> None:
    from harness.agents.mini import MiniAgent

    ctx = make_ctx(tmp_path, FakeSandbox(ExecResult(0, "", "", 0)))
    ctx.gateway_url = None
    with pytest.raises(UserError, match="gateway"):
        MiniAgent().run(ctx)


def test_real_agents_registry() -> None:
    from harness.agents.registry import REAL_AGENTS

    assert set(REAL_AGENTS) == {
        "mini-swe-agent", "aider", "codex", "opencode", "claude-code", "qwen-code", "goose",
        "crush", "openhands",
    }  # fmt: skip
    for name, cls in REAL_AGENTS.items():
        agent = cls()
        assert agent.name == name
        assert agent.image("python")
    entries = yaml.safe_load((REPO_ROOT / "agents.yml").read_text())["agents"]
    shipped = {e["name"] for e in entries} - {"oracle", "nop"}
    # every shipped real agent has an adapter; goose has one but is not installable here
    assert shipped == set(REAL_AGENTS) - {"goose", "crush"}


def test_a_transcript_over_the_cap_is_left_out_and_said(tmp_path: Path) -> None:
    from harness.agents.common import TRANSCRIPT_CAP, copy_transcripts
    from harness.util.agentfiles import OverCap

    class Huge(FakeSandbox):
        def copy_out(self, src: str, dest: Path, max_bytes: int | None = None) -> None:
            assert max_bytes == TRANSCRIPT_CAP
            raise OverCap(f"{src} is over the {max_bytes} bytes cap")

    ctx = make_ctx(tmp_path, Huge(ExecResult(0, "", "", 0.0)))
    assert copy_transcripts(ctx, {f"{AGENT_DIR}/t.json": "t.json"}) == ["t.json"]
    assert "over the" in (ctx.out_dir / "t.json.omitted").read_text()
    assert not (ctx.out_dir / "t.json").exists()


def test_an_agent_program_missing_where_it_runs_is_the_machines_fault(tmp_path: Path) -> None:
    """A CLI that is not installed (the local sandbox's exit 127) ends the agent phase as
    an infrastructure error naming the program, never as the agent's ``crashed``."""
    from harness.errors import InfraError
    from harness.sandbox.local import LocalSandbox

    (tmp_path / "ws").mkdir()
    sandbox = LocalSandbox(SandboxSpec(phase="agent", workspace=tmp_path / "ws"))
    sandbox.start()
    try:
        ctx = make_ctx(tmp_path, sandbox)
        inv = Invocation(argv=["no-such-agent-cli-here", "--task", "x"], env={})
        with pytest.raises(InfraError, match="agent program not found: `no-such-agent-cli-here`"):
            run_invocation(ctx, inv)
    finally:
        sandbox.stop()
    real = ExecResult(127, "", "bash: line 1: ls: command not found", 0.0)
    assert not program_missing(real, "mini")  # the agent's own command, not the CLI
