"""Keep the app under test away from the evidence: its own user, its own view of files.

The app is an adversary (it was built by the agent): it may try to read the suite, the
verification request, the seed, the harness package with its fixture generator, and to
rewrite the trace the mock dependency writes. The scorer runs the app in one of three
confinements, chosen at run time and stated in the report:

``namespace``  (scorer is root and may unshare: ``--sandbox local`` as root)
    an allowlist: private mount and PID namespaces in which the app sees a minimal
    root (``jailroot``: system folders read-only, its home, a private ``/tmp``; no
    ``/home``, ``/root``, ``/work``, results or other trials), ``/proc`` shows only the
    app's own processes, and the app runs as the unprivileged uid ``APP_UID`` with no
    groups and ``no_new_privs``. Its network is the scorer's private namespace
    (``netns``: loopback only, shared with the mocks and probes of this one scoring).
``user``       (scorer is root without namespaces: the scorer container)
    the app runs as ``APP_UID``; protected paths must already be unreachable for
    "other" (the container entry point makes ``/verify`` and ``/opt/harness`` 0700). A
    protected path the app could reach is an infrastructure error, never a silent pass.
``none``       (scorer is not root: ``--sandbox local`` as a normal user)
    nothing can be enforced by the OS: the app runs as the scorer's own user with a
    clean environment (no seed, no PYTHONPATH) in a private copy of the tree. It could
    still read the suite and the harness package and write the trace. Said in the report.

In every mode the app gets a private copy of the tree and its own data folder, both in
a fresh home, and a minimal environment.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Literal

import harness
from harness.appkit import netns
from harness.appkit.jailroot import (
    build_skeleton,
    enter_argv,
    etc_files,
    root_script,
    unshare_argv,
)
from harness.errors import InfraError

APP_UID = 61000  # no passwd entry needed; owns nothing but the app's home
Mode = Literal["namespace", "user", "none"]
_PROTECTED: contextvars.ContextVar[tuple[Path, ...]] = contextvars.ContextVar(
    "harness_protected", default=()
)
_CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@contextlib.contextmanager
def protecting(paths: Sequence[Path | str | None]) -> Iterator[None]:
    """Add paths (suite, request, hidden material, evidence) the app must not reach."""
    extra = tuple(Path(p).resolve() for p in paths if p)
    token = _PROTECTED.set(_PROTECTED.get() + extra)
    try:
        yield
    finally:
        _PROTECTED.reset(token)


@functools.cache
def _harness_dirs(python: str) -> tuple[Path, ...]:
    """The harness package as this process and as a clean ``python`` would import it."""
    found = {Path(harness.__file__).resolve().parent}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            [python, "-c", "import harness, os; print(os.path.dirname(harness.__file__))"],
            env={"PATH": _CLEAN_PATH},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout.strip()
        if out and Path(out).is_dir():
            found.add(Path(out).resolve())
    return tuple(sorted(found))


def protected_paths() -> list[Path]:
    """Every existing path to keep from the app: harness package(s) plus registered ones.

    The package is looked up as this process imports it and as the scorer's and the
    app's interpreters would (an editable install elsewhere is hidden too).
    """
    pythons = {sys.executable, shutil.which("python3", path=_CLEAN_PATH) or "python3"}
    dirs = {d for py in sorted(pythons) for d in _harness_dirs(py)}
    paths = [*sorted(dirs), *_PROTECTED.get()]
    out: list[Path] = []
    for p in paths:
        if p.exists() and p not in out:
            out.append(p)
    return out


@functools.cache
def _can_unshare() -> bool:
    needed = ("unshare", "setpriv", "chroot", "mount")
    if os.geteuid() != 0 or not all(shutil.which(t) for t in needed):
        return False
    try:
        probe = subprocess.run(
            unshare_argv("mount -t tmpfs none /mnt"),
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def _interpreter_prefix(python: str) -> tuple[Path, ...]:
    """The interpreter's install prefix when it is not under ``/usr`` (bound read-only)."""
    real = Path(shutil.which(python, path=_CLEAN_PATH) or python).resolve()
    prefix = real.parent.parent
    if real.is_absolute() and prefix != Path("/") and Path("/usr") not in (prefix, *prefix.parents):
        return (prefix,)
    return ()


def detect_mode() -> Mode:
    """The strongest confinement available to this scorer process."""
    if os.geteuid() != 0:
        return "none"
    return "namespace" if _can_unshare() else "user"


def reachable_by_others(path: Path) -> bool:
    """Whether a user who is neither owner nor in the group could read ``path``."""
    path = Path(path).resolve()
    for parent in reversed(path.parents):
        if not os.stat(parent).st_mode & 0o001:
            return False
    mode = os.stat(path).st_mode
    return bool(mode & 0o004)


class Jail:
    """A home for one app under test (tree copy + data) and how to launch it there."""

    def __init__(self, tree: Path, *, mode: Mode | None = None) -> None:
        self.mode: Mode = mode or detect_mode()
        #: the interpreter an app spec names as ``python3``, found on the clean PATH
        self.python = shutil.which("python3", path=_CLEAN_PATH) or "python3"
        self.uid = APP_UID if self.mode != "none" else os.geteuid()
        self.hidden = protected_paths()
        self.home = Path(tempfile.mkdtemp(prefix="harness-app-"))
        self.tree = self.home / "tree"
        self.data = self.home / "data"
        shutil.copytree(tree, self.tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        self.data.mkdir()
        (self.home / "tmp").mkdir()
        #: the scorer's own folder for the minimal root (mount point + generated /etc)
        self.sys = Path(tempfile.mkdtemp(prefix="harness-appsys-"))
        self.root = self.sys / "root"
        self.private_net = netns.active()
        self.ro_binds: list[Path] = []
        if self.mode == "namespace":
            self.ro_binds = build_skeleton(self.root, etc_files(self.uid))
            for prefix in _interpreter_prefix(self.python):
                (self.root / prefix.relative_to("/")).mkdir(parents=True, exist_ok=True)
                self.ro_binds.append(prefix)
        if self.mode != "none":
            self._chown(self.home)
        if self.mode != "none":
            probe = subprocess.run(
                self.wrap(["true"]), env=self.env(), capture_output=True, text=True, check=False
            )
            if probe.returncode != 0:
                self.close()
                raise InfraError(
                    f"cannot run the app confined ({self.mode}): "
                    f"{(probe.stderr.strip().splitlines() or ['no output'])[-1]}",
                    fix="the scorer needs CAP_SETUID/CAP_SETGID/CAP_CHOWN (root)",
                )
        if self.mode == "user":
            reachable = [p for p in self.hidden if reachable_by_others(p)]
            if reachable:
                self.close()
                raise InfraError(
                    f"cannot keep {reachable[0]} out of the app's reach (readable by others)",
                    fix="run the scorer in its container, or as root with unshare available",
                )

    def _chown(self, root: Path) -> None:
        os.chown(root, self.uid, self.uid)
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                with contextlib.suppress(FileNotFoundError):
                    os.chown(Path(folder) / name, self.uid, self.uid, follow_symlinks=False)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """The command that runs ``argv`` confined."""
        argv = [str(a) for a in argv]
        if self.mode == "none":
            return argv
        drop = [
            "setpriv",
            f"--reuid={self.uid}",
            f"--regid={self.uid}",
            "--clear-groups",
            "--no-new-privs",
            "--",
        ]
        if self.mode == "user":
            return [*drop, *argv]
        script = root_script(self.root, self.home, self.hidden, self.ro_binds)
        tied = threading.current_thread() is threading.main_thread()
        return unshare_argv(script, enter_argv(self.root, self.tree, drop, argv), tied=tied)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """A minimal environment: no seed, no PYTHONPATH, nothing of the scorer's."""
        return {
            "PATH": _CLEAN_PATH,
            "HOME": str(self.home),
            "TMPDIR": str(self.home / "tmp"),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            **(extra or {}),
        }

    def statement(self) -> str:
        """What is and is not enforced, for the report."""
        if self.mode == "namespace":
            net = (
                "a network namespace shared only with the scorer's mocks (loopback)"
                if self.private_net
                else "the host's network (no private network namespace here)"
            )
            return (
                f"enforced: app runs as uid {self.uid} in private mount+PID namespaces, "
                f"in a minimal root (system folders read-only, its home, a private /tmp), "
                f"with {net}; trace written by the scorer"
            )
        if self.mode == "user":
            return (
                f"enforced: app runs as uid {self.uid}; protected paths are not readable "
                "by it; trace written by the scorer"
            )
        return (
            "NOT enforced: the scorer is not root, so the app runs as the same user; it "
            "gets a clean environment and a private tree copy, but could read the suite "
            "and harness package and write the trace"
        )

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
        shutil.rmtree(self.sys, ignore_errors=True)
