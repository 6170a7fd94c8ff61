"""Who the hidden tests run as, and how a test command runs so nothing of it survives.

The verifier's controller (this process) parses results and writes the outcome; the test
command runs the agent's code and must reach neither. When the controller is root (the
scorer container; ``--sandbox local`` as root) every test command runs as ``uid``: the
sandboxes' run user in the container, ``LOCAL_TEST_UID`` on a host. The tree is handed
to that user, except the hidden tests and their folders (root's, sticky: the tests may
add files there, not replace the suite). Every command goes through ``reaper.py``, which
kills every process of the run before its status is written to a folder only the
controller can write. On a host that can make private namespaces the command also runs
in the test root (``test_root``): an allow list of the machine, not the host's file
system. Without root nothing of this can be enforced by the OS: the command runs as the
controller's user, still reaped (the report says which).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import InfraError
from harness.util.capped import Capped
from harness.util.deeptree import remove_tree, walk
from harness.verify.isolation import output_pipe
from harness.verify.isolation.test_root import TestRoot, entered

REAPER = Path(__file__).with_name("reaper.py")
LOCAL_TEST_UID = 61001  # no passwd entry needed; beside appkit.jail's APP_UID 61000
GRACE_S = 60.0
OUTPUT_KEEP = 64 * 1024 * 1024  # bytes of each stream kept; the rest is read and dropped
CHUNK = 1 << 16


@dataclass(frozen=True)
class TestUser:
    """The user a test command runs as. ``root``: the allow list it sees instead of the
    host's file system (``test_root``; None where namespaces cannot be made). Without
    one, ``read_all`` (on a host, where the toolchain may sit in root's home) keeps
    CAP_DAC_READ_SEARCH: it may read any file, write none of the controller's."""

    __test__ = False  # not a pytest class

    uid: int
    read_all: bool = False
    root: TestRoot | None = None


def effective_user(
    requested: int | None, read_all: bool, root: TestRoot | None = None
) -> TestUser | None:
    """Who tests run as: ``requested`` when the controller is root, else nobody else.
    In a test ``root`` the toolchain is in reach without reading every file."""
    if requested is None or os.geteuid() != 0 or requested == 0:
        return None
    return TestUser(requested, read_all and root is None, root)


def statement(user: TestUser | None) -> str:
    if user is None:
        return (
            "NOT enforced: the verifier is not root, so the tests run as its own user "
            "(every process of a test run is still killed before results are read)"
        )
    seen = (
        "in private mount and PID namespaces on an allow-list root (system folders, the "
        "toolchain and dependencies read-only, the tree and its home writable, a private "
        "/tmp; nothing else of the host)"
        if user.root is not None
        else "NOT in a root of their own (no private namespaces here): they could read "
        "the host's world-readable files"
    )
    return (
        f"enforced: tests ran as uid {user.uid}, which cannot write the verifier's output, "
        f"{seen}; every process of a test run was killed before its results were read"
    )


def _chown_tree(root: Path, uid: int, *, skip: str | None = None) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    for folder, dirs, files in walk(root):
        if skip and Path(folder) == root:
            dirs[:] = [d for d in dirs if d != skip]
        for name in dirs + files:
            with contextlib.suppress(FileNotFoundError):
                os.chown(Path(folder) / name, uid, uid, follow_symlinks=False)


def hand_over(tree: Path, uid: int | None, protected: Iterable[Path]) -> None:
    """Give ``tree`` to the test user; ``protected`` files (the hidden tests) stay the
    controller's and read-only, their folders the controller's and sticky."""
    if uid is None:
        return
    _chown_tree(tree, uid, skip=".git")  # the baseline's objects stay the verifier's
    git_dir = tree / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        git_dir.chmod(0o700)
    parent = tree.parent
    if parent.stat().st_uid == os.geteuid() and not parent.stat().st_mode & stat.S_IXOTH:
        parent.chmod(parent.stat().st_mode | 0o711)  # traversable, not listable
    me = os.geteuid()
    for path in protected:
        if path.is_symlink() or not path.is_file():
            continue
        os.chown(path, me, me)
        path.chmod((path.stat().st_mode & 0o755) | 0o444)
        folder = path.parent
        while folder.is_relative_to(tree):
            os.chown(folder, me, me)
            folder.chmod(0o1777)
            if folder == tree:
                break
            folder = folder.parent


def take_back(tree: Path) -> None:
    """After the tests: the tree is closed to others again (an app under test, run by
    the suite as another user, must not reach the original copy)."""
    if os.geteuid() == 0 and tree.is_dir():
        os.chown(tree, 0, 0)
        tree.chmod(0o700)


class NoHomeBase(InfraError):
    """No temporary folder another uid can reach: the harness's fault (``error``, exit 3),
    never the code's."""


def reachable_by_all(path: Path) -> bool:
    """Every folder from ``/`` down to ``path`` is searchable by any uid (o+x)."""
    try:
        return all(p.stat().st_mode & stat.S_IXOTH for p in [path, *path.parents])
    except OSError:
        return False


def home_base() -> Path:
    """Where test homes go: the temporary folder when every uid can reach it, else
    ``/tmp`` or ``/var/tmp`` (a worker's private ``TMPDIR``, 0700, would hide the test
    binaries and ``test2json`` from the test user, whose failure would read as the
    code's)."""
    for base in (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp")):
        if base.is_dir() and reachable_by_all(base):
            return base
    raise NoHomeBase(
        f"no temporary folder the test user can reach ({tempfile.gettempdir()}, /tmp, "
        "/var/tmp are not searchable by every uid)"
    )


@contextlib.contextmanager
def test_home(uid: int | None) -> Iterator[Path]:
    """A fresh home for one test command (HOME, user site, junit report), the test
    user's (in a folder it can reach: ``home_base``); removed afterwards."""
    base = home_base() if uid is not None else None
    home = Path(tempfile.mkdtemp(prefix="harness-testhome-", dir=base))
    try:
        (home / "tmp").mkdir()  # its TMPDIR
        if uid is not None:
            os.chown(home, uid, uid)
            os.chown(home / "tmp", uid, uid)
        yield home
    finally:
        remove_tree(home)


def owned_dir(path: Path, uid: int | None) -> Path:
    """``path`` if the test user may write it, else a sibling of its own (a cache)."""
    if uid is None:
        return path
    with contextlib.suppress(OSError):
        if path.stat().st_uid == uid:
            return path
    mine = path.with_name(f"{path.name}-uid{uid}")
    mine.mkdir(parents=True, exist_ok=True)
    if mine.stat().st_uid != uid:
        _chown_tree(mine, uid)
    return mine


@dataclass(frozen=True)
class Ran:
    returncode: int | None  # None: timed out
    output: str
    killed: int  # processes still alive at the end, killed


class _Sink(threading.Thread):
    """Reads one stream of the run to its end, keeping its first ``keep`` bytes."""

    def __init__(self, fd: int, keep: int) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.kept = Capped(keep)

    def run(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, CHUNK)
            except OSError:
                return
            if not chunk:
                return
            self.kept.add(chunk)

    def text(self) -> str:
        out, kept = self.kept.text(), self.kept
        if kept.dropped:
            out += f"\n[harness] output cut after {kept.cap} bytes ({kept.dropped} more)"
        return out


def _collect(
    wrapper: list[str], cwd: Path, env: dict[str, str], limit: float
) -> tuple[int | None, str]:
    """Run the reaper with its output read as it comes (``OUTPUT_KEEP`` bytes of each
    stream kept); (its exit status, or None when it outlived ``limit``; the output).
    The pipes are the controller's own, named to the run (``output_pipe.ENV``)."""
    (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe()
    try:
        proc = subprocess.Popen(
            wrapper, cwd=cwd, env={**env, output_pipe.ENV: output_pipe.name(out_w)},
            stdout=out_w, stderr=err_w,
        )  # fmt: skip
    except BaseException:
        os.close(out_r)
        os.close(err_r)
        raise
    finally:
        os.close(out_w)
        os.close(err_w)
    sinks = [_Sink(out_r, OUTPUT_KEEP), _Sink(err_r, OUTPUT_KEEP)]
    for sink in sinks:
        sink.start()
    code: int | None
    try:
        code = proc.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    for sink in sinks:  # the pipes close once every holder is dead (the reaper saw to it)
        sink.join(timeout=GRACE_S if code is not None else 1.0)
    output = "".join(sink.text() for sink in sinks)
    if not any(sink.is_alive() for sink in sinks):  # a reader still blocked keeps its pipe
        os.close(out_r)
        os.close(err_r)
    return code, output


def _home_dirs(env: dict[str, str]) -> list[Path]:
    """The command's own home and temp folder (the controller made them for it)."""
    return [Path(env[k]) for k in ("HOME", "TMPDIR") if env.get(k, "").startswith("/")]


def run_reaped(
    cmd: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    user: TestUser | None,
    *,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
) -> Ran:
    """Run ``cmd`` under the reaper (as ``user``); every process of it is dead on return.
    In ``user.root`` it sees ``cwd``, its HOME and TMPDIR and ``writable`` (the tree)
    writable, ``readable`` read-only, and the root's allow list; nothing else."""
    status_dir = Path(tempfile.mkdtemp(prefix="harness-teststatus-"))  # 0700, ours
    status = status_dir / "status.json"
    marker = status_dir / "entered"
    wrapper = [sys.executable, "-I", str(REAPER), "--status", str(status)]
    wrapper += ["--timeout", f"{timeout:.1f}"]
    jailed = user is not None and user.root is not None
    try:
        with contextlib.ExitStack() as stack:
            if user is not None and user.root is not None:  # the uid is dropped inside
                rw = [cwd, *_home_dirs(env), *writable]
                jail = entered(user.root, user.uid, cmd, cwd, rw, readable, marker)
                cmd = stack.enter_context(jail)
            elif user is not None:
                wrapper += ["--uid", str(user.uid)]
                wrapper += ["--read-all", "1"] if user.read_all else []
            wrapper += ["--", *cmd]
            code, output = _collect(wrapper, cwd, env, timeout + GRACE_S)
        if code is None:
            return Ran(None, output + f"\n[harness] timed out after {timeout:.0f}s", 0)
        if not status.is_file():  # the reaper itself was killed: nothing is trusted
            return Ran(1, output + "\n[harness] the test run's supervisor was killed", 0)
        data = json.loads(status.read_text())
        if jailed and not marker.is_file() and not data.get("timed_out"):
            last = (output.strip().splitlines() or ["no output"])[-1]
            raise InfraError(
                f"could not make the hidden tests' root: {last}",
                fix="run the verifier as root where unshare and mount work, or not as root",
            )
    finally:
        remove_tree(status_dir)
    if data.get("timed_out"):
        return Ran(None, output + f"\n[harness] timed out after {timeout:.0f}s", data["killed"])
    return Ran(data.get("returncode"), output, int(data.get("killed", 0)))
