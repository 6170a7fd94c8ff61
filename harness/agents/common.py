"""Shared machinery for real agent CLIs: plan, run once, copy out, classify.

An adapter turns an ``AgentContext`` into an ``Invocation`` (argv, env, config files,
transcript paths) with a pure function, so that unit tests can check that the gateway is
the only address an agent is given. ``run_invocation`` then does the I/O: it writes the
config files into a folder outside the workspace (so they never show in the agent's
diff), runs the CLI once with the trial's timeout, saves stdout/stderr and transcripts
into ``ctx.out_dir``, and classifies the exit with ``classify_exit``.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.agents.base import AgentContext, AgentExit, AgentResult
from harness.errors import InfraError, UserError
from harness.sandbox.base import ExecResult
from harness.sandbox.owner import owner_labels
from harness.util.agentfiles import OverCap

AGENT_DIR = "/tmp/harness-agent"  # config, task and transcripts; never in the workspace
AGENT_HOME = f"{AGENT_DIR}/home"  # $HOME for the CLI, so its state stays out of the workspace
TAIL_LINES = 25
TAIL_CHARS = 2500
SCAN_CHARS = 6000  # classification looks at the end of the output only
TRANSCRIPT_CAP = 64 * 1024 * 1024  # bytes per transcript copied out (as workspace.diff)

CONTEXT_PATTERNS = re.compile(
    r"context[_ ]?window[_ ]?exceeded|context_length_exceeded|ContextWindowExceeded"
    r"|maximum context length|exceeds? (?:the )?(?:model'?s? )?context (?:window|length)"
    r"|prompt is too long|too many tokens",
    re.IGNORECASE,
)
BUDGET_PATTERNS = re.compile(r"budget_exceeded|budget is spent", re.IGNORECASE)
RATE_PATTERNS = re.compile(
    r"rate[_ ]?limit|RateLimitError|too many requests|\b429\b|quota exceeded",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Invocation:
    """One run of an agent CLI, fully described before anything runs.

    ``files`` maps absolute paths inside the sandbox to their text; ``transcripts`` maps
    paths inside the sandbox to names under ``ctx.out_dir``; ``cleanup`` lists files or
    folders, relative to the workspace, that the CLI leaves behind as its own cache.
    """

    argv: list[str]
    env: dict[str, str]
    files: dict[str, str] = field(default_factory=dict)
    transcripts: dict[str, str] = field(default_factory=dict)
    cleanup: list[str] = field(default_factory=list)


def require_gateway(ctx: AgentContext, agent: str) -> tuple[str, str]:
    """The gateway URL and key of the trial; a real agent cannot run without them."""
    if not ctx.gateway_url or not ctx.api_key:
        raise UserError(
            f"agent '{agent}' needs the model gateway, but this trial has none",
            field="--agent",
            fix="run it through `harness exec`/`harness run-agent` with the docker sandbox "
            "and a model (or --replay FILE)",
        )
    return ctx.gateway_url.rstrip("/"), ctx.api_key


def task_text(ctx: AgentContext) -> str:
    """The scenario's instructions, pointing at the spec file when the scenario has one."""
    text = (ctx.instructions or ctx.scenario.scenario.agent.instructions).strip()
    spec = ctx.scenario.scenario.spec
    if spec:
        name = Path(spec).name
        if name not in text:
            text += f"\n\nThe specification is in {name} in the repository root."
    return text + "\n"


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The last lines of ``text`` (at most ``chars`` characters), for a result's detail."""
    kept = "\n".join(text.rstrip().splitlines()[-lines:])
    return kept[-chars:]


def classify_exit(
    returncode: int | None, timed_out: bool, output: str, *, status: str = ""
) -> tuple[AgentExit, str]:
    """The exit category and a detail line, from what the CLI did and printed.

    ``status`` is the agent's own final status when it writes one (e.g. mini's
    ``exit_status``); it is searched before the output. Only the end of the output is
    scanned, so a model quoting an error message earlier in a run does not count.
    """
    if timed_out:
        return "timeout", f"killed at the time limit | {tail(output, 5, 500)}".rstrip(" |")
    scanned = f"{status}\n{output[-SCAN_CHARS:]}"
    if CONTEXT_PATTERNS.search(scanned):
        return "context_window_exceeded", tail(output, 8, 800)
    if returncode != 0 and BUDGET_PATTERNS.search(scanned):  # the gateway's refusal (a 429)
        return "budget", tail(output, 8, 800)
    if returncode != 0 and RATE_PATTERNS.search(scanned):
        return "rate_limited", tail(output, 8, 800)
    if returncode == 0:
        return "completed", status or "exit 0"
    return "crashed", f"exit {returncode} | {tail(output)}"


def json_events(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects a CLI printed one per line (``--json`` modes); other lines skipped."""
    out = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict):
            out.append(item)
    return out


def last_event(evts: list[dict[str, Any]], kind: str) -> dict[str, Any] | None:
    """The last event whose ``type`` is ``kind``, if any."""
    return next((ev for ev in reversed(evts) if ev.get("type") == kind), None)


def stage_files(files: dict[str, str], staging: Path) -> Path:
    """Write ``files`` (absolute sandbox paths under AGENT_DIR) into a host staging copy."""
    root = staging / Path(AGENT_DIR).name
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir(exist_ok=True)
    for path, text in files.items():
        if not path.startswith(AGENT_DIR + "/"):
            raise ValueError(f"agent files must live under {AGENT_DIR}: {path}")
        target = root / path[len(AGENT_DIR) + 1 :]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def save_output(ctx: AgentContext, res: ExecResult) -> None:
    """Keep the CLI's stdout and stderr in the run folder."""
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    (ctx.out_dir / "stdout.txt").write_text(res.stdout, encoding="utf-8")
    (ctx.out_dir / "stderr.txt").write_text(res.stderr, encoding="utf-8")


def copy_transcripts(ctx: AgentContext, transcripts: dict[str, str]) -> list[str]:
    """Copy each transcript that exists out of the sandbox; the names of those missing.

    Each is capped at ``TRANSCRIPT_CAP`` (the agent writes it, so it may be huge or
    sparse): one over the cap is left out and ``<name>.omitted`` says why."""
    missing = []
    for src, name in transcripts.items():
        try:
            ctx.sandbox.copy_out(src, ctx.out_dir / name, max_bytes=TRANSCRIPT_CAP)
        except FileNotFoundError:
            missing.append(name)
        except OverCap as exc:
            missing.append(name)
            (ctx.out_dir / f"{name}.omitted").write_text(f"not copied: {exc}\n")
    return missing


Classifier = Callable[[ExecResult, AgentContext], AgentResult]


def default_classifier(res: ExecResult, ctx: AgentContext) -> AgentResult:
    """``classify_exit`` over the CLI's exit code and combined output."""
    exit_, detail = classify_exit(res.returncode, res.timed_out, f"{res.stdout}\n{res.stderr}")
    return AgentResult(exit=exit_, detail=detail, returncode=res.returncode)


def verdict(
    res: ExecResult,
    *,
    usage: dict[str, Any] | None = None,
    status: str = "",
    failed: bool = False,
) -> AgentResult:
    """Classify one run. ``failed``: the agent reported a failure yet exited 0 (several
    CLIs do), so the exit code is treated as 1; ``status`` is its own account of it."""
    code = 1 if failed and res.returncode == 0 else res.returncode
    exit_, detail = classify_exit(code, res.timed_out, f"{res.stdout}\n{res.stderr}", status=status)
    return AgentResult(
        exit=exit_, detail=detail, returncode=res.returncode, self_reported_usage=usage or {}
    )


def events_verdict(
    res: ExecResult,
    usage: Callable[[list[dict[str, Any]]], dict[str, Any]],
    failure: Callable[[list[dict[str, Any]]], str],
) -> AgentResult:
    """Classify a CLI that prints JSON events: its token counts come from the events, and
    its own failure message (``failure``; it may still exit 0) makes the run a failure."""
    evts = json_events(res.stdout)
    status = failure(evts)
    return verdict(res, usage=usage(evts), status=status, failed=bool(status))


def run_invocation(
    ctx: AgentContext, inv: Invocation, classify: Classifier = default_classifier
) -> AgentResult:
    """Stage config files, run the CLI once under the trial timeout, collect its output."""
    with tempfile.TemporaryDirectory(prefix="harness-agent-") as tmp:
        ctx.sandbox.copy_in(stage_files(inv.files, Path(tmp)), AGENT_DIR)
    argv, env = [*inv.argv, *ctx.extra_args], {**inv.env, **ctx.extra_env}  # the user's last
    res = ctx.sandbox.exec(argv, cwd=ctx.sandbox.project_dir, env=env, timeout=ctx.timeout_s)
    save_output(ctx, res)
    if program_missing(res, inv.argv[0]):  # the machine's fault, never the agent's
        raise InfraError(
            f"agent program not found: `{inv.argv[0]}` is not installed where the agent runs "
            f"({res.stderr.strip()[:160]})",
            fix="install it on this machine (`harness doctor` names the line) "
            "or use --sandbox docker",
        )
    try:
        copy_transcripts(ctx, inv.transcripts)
        if inv.cleanup:
            ctx.sandbox.exec(["rm", "-rf", "--", *inv.cleanup], timeout=60)
    except InfraError:  # a host-side kill (deadline, or a limit) already ended the sandbox
        if not (res.timed_out or res.limit):
            raise
    return classify(res, ctx)


def program_missing(res: ExecResult, program: str) -> bool:
    """Whether the command did not run at all because ``program`` is not installed."""
    if res.returncode != 127 or res.stdout.strip():
        return False
    text = res.stderr.lower()
    return program.lower() in text and any(
        sign in text for sign in ("no such file", "not found", "executable file")
    )


INSTALL = re.compile(r"(pip install|npm install -g)\b[^\n\"]*?\"([^\"]+(?:==|@)[^\"]+)\"")


def install_command(image: str) -> str | None:
    """The install line of the agent's image (``images/<image>/Dockerfile``), as one
    command for this machine: ``pip install 'mini-swe-agent==2.4.6'``, or None."""
    from harness.images.graph import images_dir

    try:
        text = (images_dir() / image / "Dockerfile").read_text(encoding="utf-8")
    except OSError:
        return None
    found = INSTALL.search(text)
    if found is None:
        return None
    return f"{found.group(1)} '{found.group(2)}'"


def install_line(image: str) -> str:
    """How to install an agent's program here, for a one-line error."""
    return install_command(image) or f"as images/{image}/Dockerfile does"


def base_env(api_key: str) -> dict[str, str]:
    """Environment every agent CLI gets: its own HOME, no telemetry, no colours."""
    return {
        "HOME": AGENT_HOME,
        "XDG_CONFIG_HOME": f"{AGENT_HOME}/.config",
        "XDG_DATA_HOME": f"{AGENT_HOME}/.local/share",
        "XDG_CACHE_HOME": f"{AGENT_HOME}/.cache",
        "XDG_STATE_HOME": f"{AGENT_HOME}/.local/state",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "DO_NOT_TRACK": "1",
        "HARNESS_API_KEY": api_key,
        # the workspace belongs to the host user; git must still treat it as a repository
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": "*",
    }


# ---- versions ---------------------------------------------------------------------------
VERSION_TIMEOUT_S = 120
_VERSIONS: dict[str, str] = {}  # image id -> reported version, for this process


def parse_version(output: str, pattern: str) -> str | None:
    """The first ``pattern`` group found in a CLI's ``--version`` output."""
    found = re.search(pattern, output)
    return found.group(1) if found else None


def image_version(image: str, argv: list[str], pattern: str) -> str:
    """The version the CLI in ``image`` reports, cached per image id (memory and disk).

    The image is built when missing; the CLI runs once in a throwaway container with no
    network, which is removed whatever happens.
    """
    from harness.config.settings import cache_dir
    from harness.images import docker_client, ensure_image  # the Docker SDK, when probed

    ref = ensure_image(image)
    if ref.id in _VERSIONS:
        return _VERSIONS[ref.id]
    cached = cache_dir() / "agent-versions" / f"{ref.id.replace(':', '-')}.txt"
    if cached.is_file():
        _VERSIONS[ref.id] = cached.read_text().strip()
        return _VERSIONS[ref.id]
    client = docker_client()
    container = client.containers.create(
        ref.tag,
        argv,
        network_mode="none",
        environment={"HOME": "/tmp", "NO_COLOR": "1"},
        # the pid tells this process's probe from another's of the same image
        labels={"harness": "1", "harness.phase": "agent-version", **owner_labels()},
    )
    try:
        container.start()
        code = container.wait(timeout=VERSION_TIMEOUT_S).get("StatusCode")
        output = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    except Exception as exc:  # the engine, or the CLI hanging past the limit
        raise InfraError(f"`{' '.join(argv)}` in {ref.tag} failed: {exc}") from exc
    finally:
        container.remove(force=True)
    version = parse_version(output, pattern)
    if code != 0 or version is None:
        raise InfraError(
            f"`{' '.join(argv)}` in {ref.tag} exited {code} without a version: {tail(output, 3)}",
            file=f"images/{image}/Dockerfile",
        )
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(version + "\n")
    _VERSIONS[ref.id] = version
    return version


def unshipped_version(agent: str, image: str, why: str, argv: list[str]) -> str:
    """The version of an agent whose image this project cannot build yet (``why``): a
    UserError naming the missing ``images/<image>/Dockerfile`` until someone adds one."""
    from harness.images.graph import images_dir

    if not (images_dir() / image / "Dockerfile").is_file():
        raise UserError(
            f"{agent} cannot be installed here: {why}",
            file=images_dir() / image,
            field=f"agents.{agent}",
            fix=f"add images/{image}/Dockerfile that installs the {agent} binary, "
            f"or remove {agent} from agents.yml",
        )
    return image_version(image, argv, r"(\d+\.\d+\.\d+)")


class CliAgent:
    """An agent CLI in its own image ``agent-<x>`` (``agent-<x>-go`` for Go scenarios).

    Subclasses set the names and the version probe, and provide ``invocation`` (the
    command, environment and config files) and ``classify`` (the run's verdict).
    """

    name: str
    image_name: str
    version_argv: list[str]
    version_pattern: str

    def version(self) -> str:
        return image_version(self.image_name, self.version_argv, self.version_pattern)

    def image(self, toolchain: str) -> str | None:
        return f"{self.image_name}-go" if toolchain == "go" else self.image_name

    def invocation(self, gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
        raise NotImplementedError

    def classify(self, res: ExecResult, ctx: AgentContext) -> AgentResult:
        return self.classify_output(res)

    def classify_output(self, res: ExecResult) -> AgentResult:
        """The verdict from the CLI's exit and output (set to the module's ``classify``)."""
        return verdict(res)

    def run(self, ctx: AgentContext) -> AgentResult:
        url, key = require_gateway(ctx, self.name)
        inv = self.invocation(url, key, ctx.model.id_for(self.name), task_text(ctx))
        return run_invocation(ctx, inv, self.classify)


class UnshippedCliAgent(CliAgent):
    """A CLI agent whose image this project cannot build here (``why``): one image for
    every toolchain, and a version probe that names the missing Dockerfile."""

    why: str

    def version(self) -> str:
        return unshipped_version(self.name, self.image_name, self.why, self.version_argv)

    def image(self, toolchain: str) -> str | None:
        return self.image_name
