"""The containment control: play each attack as a real trial and check what it reached.

An attack is CONTAINED when its trial (1) ends with the verdict the unfixed code earns
(never ``error``), with the score and the restorations or rejection it expects; (2) made
no host marker appear; (3) put no host data (the control's secret, the first line of
``/etc/shadow``) anywhere in the run folder; (4) left nothing behind: no container,
network or volume labelled with the trial, no process carrying the attack's token, and no
entry in a world-writable folder of the host (``/tmp``, ``/run/lock``, ``/dev/shm``, ...:
the only places the uids the tree's code runs as can write outside the trial) owned by
one of those uids or named with the token.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.appkit.jail import APP_UID
from harness.config.entrants import NO_MODEL, LLMEntry
from harness.config.project import require_scenarios
from harness.config.settings import Settings, cache_dir
from harness.errors import HarnessError, UserError
from harness.grader.containment.agent import AGENT_NAME, AGENT_VERSION, AttackAgent
from harness.grader.containment.catalogue import Attack
from harness.grader.containment.hostservice import LoopbackService
from harness.sandbox.docker import SANDBOX_UID
from harness.scenario import LoadedScenario, load_scenario
from harness.trial import Entrant, RunOptions, Trial
from harness.util.deeptree import remove_tree
from harness.verify.go.build import BUILDER_OFFSET
from harness.verify.isolation.test_user import LOCAL_TEST_UID

SCAN_CAP = 64 * 1024 * 1024  # bytes read per result file when looking for host data
#: the uids the tree's code runs as: the local test user and its builder, the app's, the
#: containers' run user (and its builder): they own nothing on the host after a trial
TREE_UIDS = frozenset(
    {LOCAL_TEST_UID, LOCAL_TEST_UID + BUILDER_OFFSET, APP_UID}
    | {SANDBOX_UID, SANDBOX_UID + BUILDER_OFFSET}
)
SKIP_TOPS = frozenset({"proc", "sys"})
#: temporary folders of harness and of test runners (other trials may run beside this
#: control): not descended into, and their owner proves nothing (the token still does)
OWN_PREFIXES = ("harness-", "pytest-of-", "tmp")


@dataclasses.dataclass
class AttackResult:
    name: str
    sandbox: str
    contained: bool
    reasons: list[str]
    outcome: str | None = None
    seconds: float = 0.0
    run_dir: Path | None = None
    skipped: bool = False

    def line(self) -> str:
        if self.skipped:
            return f"SKIPPED        {self.name} (not for --sandbox {self.sandbox})"
        if self.contained:
            return (
                f"CONTAINED      {self.name} ({self.sandbox}, {self.outcome}, {self.seconds:.0f}s)"
            )
        return f"NOT CONTAINED  {self.name} ({self.sandbox}): {'; '.join(self.reasons)}"


def _host_data(root: Path, needles: list[bytes]) -> list[str]:
    """Result files (relative) holding any of ``needles``; links are not followed."""
    hits: list[str] = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file():
                continue
            with path.open("rb") as fh:
                data = fh.read(SCAN_CAP)
            if any(n in data for n in needles):
                hits.append(path.relative_to(root).as_posix())
    return hits


def _shadow_line() -> bytes | None:
    try:
        first = Path("/etc/shadow").read_bytes().splitlines()[0]
    except (OSError, IndexError):
        return None
    return first if len(first) > 8 else None


def token_processes(token: str) -> list[int]:
    """Live processes (other than this one) whose command line holds ``token``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(int(entry))
    return found


def writable_folders(root: Path = Path("/"), depth: int = 3) -> list[Path]:
    """World-writable folders of the host down to ``depth`` (``/proc`` and ``/sys`` left
    out; links not followed): where any uid may leave something."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth + 1):
        deeper: list[Path] = []
        for folder in level:
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if folder == root and entry.name in SKIP_TOPS:
                    continue
                try:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    mode = entry.stat(follow_symlinks=False).st_mode
                except OSError:
                    continue
                if not entry.name.startswith(OWN_PREFIXES):
                    deeper.append(Path(entry.path))
                if mode & 0o002:
                    found.append(Path(entry.path))
        level = deeper
    return found


def left_on_host(token: str, folders: list[Path], uids: frozenset[int] = TREE_UIDS) -> list[str]:
    """Entries directly in ``folders`` named with ``token``, or owned by one of ``uids``
    (but for harness's and test runners' own temporary folders)."""
    left: list[str] = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                owner = entry.stat(follow_symlinks=False).st_uid
            except OSError:
                continue
            theirs = owner in uids and not entry.name.startswith(OWN_PREFIXES)
            if theirs or token in entry.name:
                left.append(entry.path)
    return sorted(left)


def docker_leftovers(run_id: str) -> list[str]:
    from harness.sandbox.engine import docker_client

    client = docker_client()
    flt: dict[str, str | list[str] | bool] = {"label": f"harness.trial={run_id}"}
    left = [f"container {c.name}" for c in client.containers.list(all=True, filters=flt)]
    left += [f"network {n.name}" for n in client.networks.list(filters=flt)]
    left += [f"volume {v.name}" for v in client.volumes.list(filters=flt)]
    return left


def _readable_secret(tmp: Path, secret: str) -> Path:
    """A host file anyone may read, on no deny list: what a machine's other copies of a
    project, other trials' traces or a user's notes look like to an app."""
    tmp.chmod(0o755)
    public = tmp / "public"
    public.mkdir(mode=0o755)
    path = public / "notes.txt"
    path.write_text(secret + "\n")
    path.chmod(0o644)
    return path


def expectations(attack: Attack, outcome: str, report: dict[str, Any]) -> list[str]:
    """What differs from the verdict the unfixed code earns (pure)."""
    reasons: list[str] = []
    want = attack.expect
    if outcome != want.outcome:
        reasons.append(f"verdict {outcome}, the code earns {want.outcome}")
    score = report.get("score")
    if want.score is not None and (score is None or abs(float(score) - want.score) > 1e-6):
        reasons.append(f"score {score}, the code earns {want.score}")
    held = report.get("containment") or {}
    restored = {str(r).split(" (", 1)[0] for r in held.get("restored") or []}
    missing = [p for p in want.restored if p not in restored]
    if missing:
        reasons.append(f"not restored: {', '.join(missing)}")
    if want.rejected and not held.get("rejected"):
        reasons.append("the forged result was not rejected")
    return reasons


def _victim(
    attack: Attack,
    values: dict[str, str],
    loaded: LoadedScenario,
    settings: Settings,
    sandbox: str,
    opts: RunOptions,
) -> list[str]:
    """A next trial of the scenario whose agent plants only ``attack.victim`` (the code
    unfixed): what it earns must be what the unfixed code earns, whatever the attack's
    trial left behind."""
    blank = attack.model_copy(update={"plant": attack.victim or {}, "run": None})
    entrant = Entrant(
        AttackAgent(blank, values),
        AGENT_NAME,
        AGENT_VERSION,
        LLMEntry(name=NO_MODEL, model=NO_MODEL),
        None,
    )
    try:
        result = Trial.setup(loaded, settings, sandbox, None).execute(entrant, opts)
    except UserError:
        raise
    except HarnessError as exc:
        return [f"the next trial failed as the harness's fault: {exc.one_line()}"]
    reasons = [f"next trial: {r}" for r in expectations(attack, result.outcome, result.report)]
    return reasons + [f"left in the harness cache: {p}" for p in planted(values["token"])]


def planted(token: str, limit: int = 5) -> list[str]:
    """Entries of the harness cache (shared folders followed once) whose name holds
    ``token``: what a trial wrote into state other trials read."""
    found: list[str] = []
    root = cache_dir()
    tops = sorted(root.iterdir()) if root.is_dir() else []
    for top in tops:
        for folder, dirs, files in os.walk(top.resolve() if top.is_dir() else top):
            found += [str(Path(folder, n)) for n in [*dirs, *files] if token in n]
            if len(found) >= limit:
                return found[:limit]
    return found


def run_attack(attack: Attack, settings: Settings, sandbox: str) -> AttackResult:
    """Play ``attack`` in one real trial on ``sandbox``; the run folder stays under
    ``<results>/containment/<sandbox>/`` for inspection."""
    if sandbox not in attack.sandboxes:
        return AttackResult(attack.name, sandbox, True, [], skipped=True)
    loaded = load_scenario(attack.scenario, require_scenarios(settings))
    tmp = Path(tempfile.mkdtemp(prefix="harness-containment-"))
    host = tmp / "host"
    host.mkdir()
    secret = "harness-secret-" + secrets.token_hex(12)
    readable = _readable_secret(tmp, secret)
    service = LoopbackService(secret, host / "marker")
    values = {
        "host_marker": str(host / "marker"),
        "host_secret": str(host / "secret.txt"),
        "host_readable": str(readable),
        "host_port": str(service.port),
        "secret": secret,
        "token": "harness-token-" + secrets.token_hex(8),
    }
    (host / "secret.txt").write_text(secret + "\n")
    run_settings = dataclasses.replace(
        settings, workspace=tmp / "ws", results=settings.results / "containment" / sandbox
    )
    entrant = Entrant(
        AttackAgent(attack, values),
        AGENT_NAME,
        AGENT_VERSION,
        LLMEntry(name=NO_MODEL, model=NO_MODEL),
        None,
    )
    opts = RunOptions(agent=AGENT_NAME, model=NO_MODEL, sandbox=sandbox)
    began = time.monotonic()
    reasons: list[str] = []
    outcome: str | None = None
    run_dir: Path | None = None
    try:
        try:
            result = Trial.setup(loaded, run_settings, sandbox, None).execute(entrant, opts)
        except UserError:
            raise
        except HarnessError as exc:
            reasons.append(f"the trial failed as the harness's fault: {exc.one_line()}")
        else:
            outcome, run_dir = result.outcome, result.run_dir
            reasons += expectations(attack, result.outcome, result.report)
            needles = [secret.encode(), *filter(None, [_shadow_line()])]
            reasons += [f"host data in results: {h}" for h in _host_data(run_dir, needles)]
            if sandbox == "docker":
                left = docker_leftovers(str(result.report.get("run_id")))
                reasons += [f"left behind: {x}" for x in left]
            if attack.victim is not None:
                reasons += _victim(attack, values, loaded, run_settings, sandbox, opts)
        if Path(values["host_marker"]).exists():
            reasons.append("host marker written")
        if service.reached:
            reasons.append(f"host loopback service reached ({service.reached} connection(s))")
        extra = sorted(p.name for p in host.iterdir() if p.name not in {"secret.txt", "marker"})
        reasons += [f"host file appeared: {x}" for x in extra]
        shared = [f for f in writable_folders() if not f.is_relative_to(tmp)]
        reasons += [f"left on the host: {x}" for x in left_on_host(values["token"], shared)]
        time.sleep(0.5)  # a leftover process of the trial would be alive still
        alive = token_processes(values["token"])
        if alive:
            reasons.append(f"{len(alive)} process(es) of the trial still running")
            for pid in alive:  # this control started them: it ends them
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    finally:
        service.close()
        remove_tree(tmp)  # the workspace an attack left, at any depth
    seconds = time.monotonic() - began
    return AttackResult(attack.name, sandbox, not reasons, reasons, outcome, seconds, run_dir)


def run_catalogue(
    attacks: list[Attack], settings: Settings, sandbox: str, echo: Callable[[str], None]
) -> list[AttackResult]:
    """Every attack in turn, each line printed as soon as it is known."""
    results = []
    for attack in attacks:
        res = run_attack(attack, settings, sandbox)
        echo(res.line())
        results.append(res)
    return results
