"""Go twins: each hidden ``_test.go`` file with its compared literals changed.

``gotwin.go`` (a small program of harness's own, std only) reads a test file with
``go/ast``, changes the literals its Test functions compare their results against, and
prints which Test functions it changed. It is built once per verifier process by the
controller, from harness's source, with a private copy of the toolchain's seed cache,
and run by the builder over the hidden files (trusted inputs; nothing of the tree).
``swapped`` puts the twins in the hidden files' places (the controller's files, as the
originals) for one run and the originals back afterwards.

A twin is fail-closed: once hidden files are there to change and a ``go`` is on the
request's ``PATH``, a tool that cannot be built, is missing, crashes or prints no answer
is the harness's fault (``InfraError``: ``error``, exit 3), never a skipped twin (which
would let a forged pass through). A file the tool read but found nothing to change in
is not a fault: its tests simply have no twin.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import InfraError
from harness.verify.go import seed as goseed
from harness.verify.go.canary import package_dirs
from harness.verify.isolation.test_user import TestUser, run_reaped, test_home

SOURCE = Path(__file__).with_name("twin.go")
TOOL_TIMEOUT_S = 300.0
_built: dict[str, Path] = {}  # toolchain -> the built tool (this process's)


def tool(env: dict[str, str], seed: Path | None) -> Path | None:
    """``gotwin`` built with ``env``'s Go (once per process); None when ``env`` has no
    Go. A Go that cannot build it (harness's own source, std only) is an InfraError."""
    go = shutil.which("go", path=env.get("PATH"))
    if go is None:
        return None
    key = f"{Path(go).resolve()}:{Path(go).resolve().stat().st_mtime_ns}"
    if key in _built and _built[key].is_file():
        return _built[key]
    work = Path(tempfile.mkdtemp(prefix="harness-gotwin-"))
    atexit.register(shutil.rmtree, work, True)  # kept for this process's later targets
    work.chmod(0o755)  # the builder runs it
    src, cache = work / "src", work / "cache"
    src.mkdir()
    (src / "main.go").write_text(SOURCE.read_text())
    if seed is not None:
        shutil.copytree(seed, cache, symlinks=True)  # a copy: the seed stays the toolchain's
    tool_env = goseed.tool_env(env, str(cache), str(work))
    try:
        ran = subprocess.run(
            [go, "build", "-o", str(work / "gotwin"), "."],
            cwd=src,
            env=tool_env,
            capture_output=True,
            timeout=TOOL_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _fault(f"could not build the Go twin tool: {exc}") from exc
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if ran.returncode != 0 or not (work / "gotwin").is_file():
        err = ran.stderr.decode(errors="replace").strip().splitlines() or ["no output"]
        raise _fault(f"could not build the Go twin tool with {go}: {err[-1]}")
    _built[key] = work / "gotwin"
    return _built[key]


def _fault(why: str) -> InfraError:
    return InfraError(
        why,
        fix="check the Go toolchain and that the hidden tests' root can see the twin tool "
        "(`harness doctor`); a test run without its twin is never scored",
    )


@dataclass
class GoTwin:
    """The twin files of one target and the Test functions they change."""

    files: dict[Path, bytes] = field(default_factory=dict)  # hidden file -> its twin
    tests: set[str] = field(default_factory=set)


def hidden_files(pattern: str, tree: Path, hidden: Sequence[str]) -> list[Path]:
    """The hidden ``_test.go`` files in the packages ``pattern`` tests."""
    dirs = {os.path.normpath(d) for d in package_dirs(pattern, tree)}
    return [
        tree / rel
        for rel in sorted(set(hidden))
        if rel.endswith("_test.go") and os.path.normpath(os.path.dirname(rel) or ".") in dirs
    ]


def plan(
    pattern: str,
    tree: Path,
    hidden: Sequence[str],
    env: dict[str, str],
    builder: TestUser | None,
    seed: Path | None,
) -> GoTwin | None:
    """The twins of the hidden files ``pattern`` tests (None: nothing to change, or no
    Go to build the tool with). A twin that cannot run is an InfraError."""
    files = hidden_files(pattern, tree, hidden)
    gotwin = tool(env, seed) if files else None
    if gotwin is None:
        return None
    if not gotwin.is_file():  # removed under us: never a silently skipped twin
        raise _fault(f"the Go twin tool {gotwin} is missing")
    twin = GoTwin()
    with test_home(builder.uid if builder else None) as home:
        for i, path in enumerate(files):
            out = home / "tmp" / f"{i}.go"
            ran = run_reaped(
                [str(gotwin), str(path), str(out)], home, {"PATH": "/usr/bin:/bin"},
                TOOL_TIMEOUT_S, builder, readable=[path, gotwin],
            )  # fmt: skip
            try:
                if ran.returncode != 0:
                    raise ValueError(f"exit {ran.returncode}")
                names = json.loads(ran.output.strip().splitlines()[-1])["tests"] or []
                text = out.read_bytes() if names else b""
            except (ValueError, IndexError, KeyError, TypeError, OSError) as exc:
                last = (ran.output.strip().splitlines() or ["no output"])[-1][:300]
                raise _fault(f"the Go twin tool failed on {path.name} ({exc}): {last}") from exc
            if names:
                twin.files[path] = text
                twin.tests.update(str(n) for n in names)
    return twin if twin.tests else None


@contextlib.contextmanager
def swapped(twin: GoTwin) -> Iterator[None]:
    """The twins in the hidden files' places while inside (same owner and mode)."""
    originals: dict[Path, bytes] = {}
    try:
        for path, text in twin.files.items():
            originals[path] = path.read_bytes()
            mode = path.stat().st_mode & 0o7777
            path.chmod(0o600)
            path.write_bytes(text)
            path.chmod(mode)
        yield
    finally:
        for path, text in originals.items():
            mode = path.stat().st_mode & 0o7777
            path.chmod(0o600)
            path.write_bytes(text)
            path.chmod(mode)
