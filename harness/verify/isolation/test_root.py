"""The hidden tests' own root: an allow list of the machine, not the host's file system.

On a host (``--sandbox local`` as root) a test command that only switched uid could still
read every world-readable file: the scenario's ``solution.patch`` and original hidden tests
in the project folder, other trials' results, and write into ``/run/lock`` or ``/var/tmp``
what outlives the run. A deny list misses the next path, so the test command (pytest, a Go
test binary under ``test2json``, the Go builder's ``go list``/``go test -c``, the Go twin's
tool) runs in private mount and PID namespaces on a fresh root holding only

- the system folders (``/usr``, ``/bin``, ``/lib*``; a few ``/etc`` pieces, a generated
  ``passwd``), ``/dev``'s harmless devices and the namespace's own ``/proc``, read-only;
- the folders the request names, read-only (``TestRoot.ro``): the interpreter's prefixes
  (``sys.prefix``, ``sys.base_prefix``), the Go toolchain on the request's ``PATH``, and
  every absolute folder in the request's own variables (``GOROOT``, ``GOMODCACHE``, the
  Go seed, venvs, ``PYTHONPATH`` entries);
- per command: the tree and the test home writable, the builder's output read-only;
- a private ``/tmp`` (tmpfs) and ``/dev/shm``;

and nothing else: no ``/root``, ``/home``, ``/work``, ``/var``, ``/run``, results,
scenarios or other trials. Protected paths that fall inside an allowed folder are
covered. The pieces are the app jail's (``scoring.appkit.jailroot``: ``unshare_argv``,
``build_skeleton``, ``enter_argv``; ``appkit.jail.detect_mode`` says whether unshare
works); the command enters the root with ``chroot`` as root and only then drops to the
test user with ``no_new_privs``. When the namespaces are not available (not root, no
mount rights: the scorer container) ``TestRoot`` is None and the tests see the file
system as before (the report says so).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.scoring.appkit.jail import detect_mode, protected_paths
from harness.scoring.appkit.jailroot import (
    DEVICES,
    ETC_ALLOWED,
    SYSTEM_DIRS,
    enter_argv,
    unshare_argv,
)

#: folders the skeleton already shows (read-only binds of the host's)
SYSTEM = tuple(Path("/") / n for n in SYSTEM_DIRS)
TMP_SIZE = "512m"
_CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class TestRoot:
    """What every test command of one verification may see besides the system folders."""

    __test__ = False  # not a pytest class

    ro: tuple[Path, ...]
    hidden: tuple[Path, ...] = field(default=())


def available() -> bool:
    """The private namespaces can be made here (root with unshare and mount rights)."""
    return detect_mode() == "namespace"


@functools.cache
def _python_prefixes(python: str) -> tuple[Path, ...]:
    """``python``'s prefixes (its own and its base), asked of the interpreter itself."""
    code = "import sys; print(sys.prefix); print(sys.base_prefix); print(sys.exec_prefix)"
    try:
        out = subprocess.run(
            [python, "-I", "-c", code],
            env={"PATH": _CLEAN_PATH},
            cwd="/",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    found = [Path(line) for line in out.splitlines() if line.startswith("/")]
    exe = shutil.which(python, path=_CLEAN_PATH) or python
    if exe.startswith("/"):  # a venv's bin/python links into its base prefix
        found.append(Path(exe).resolve().parent.parent)
    return tuple(found)


def _go_root(env: Mapping[str, str]) -> list[Path]:
    """The Go toolchain the request's PATH finds (GOROOT is the folder above its bin)."""
    go = shutil.which("go", path=env.get("PATH"))
    return [Path(go).resolve().parent.parent] if go else []


def _named_paths(env: Mapping[str, str]) -> list[Path]:
    """Every absolute, existing path in the request's own variables (``$PATH``-style
    references to the controller's values are not the request's and are dropped)."""
    out: list[Path] = []
    for value in env.values():
        for part in value.split(os.pathsep):
            if part.startswith("/") and "$" not in part and Path(part).exists():
                out.append(Path(part))
    return out


def _covered(path: Path, ro: Sequence[Path]) -> bool:
    return any(path == p or p in path.parents for p in ro)


def allow_list(
    python: str, request_env: Mapping[str, str], expanded_env: Mapping[str, str]
) -> tuple[Path, ...]:
    """The read-only folders a test command needs: system folders aside, the interpreter's
    prefixes, the Go toolchain and the request's named folders; never ``/`` nor a folder
    above a protected path (the project, the results), which would show what is hidden."""
    picked = [*_python_prefixes(python), *_go_root(expanded_env), *_named_paths(request_env)]
    out: list[Path] = []
    for path in picked:
        real = path.resolve()
        if real == Path("/") or _covered(real, SYSTEM) or real in out:
            continue
        out.append(real)
    return tuple(sorted(out))


def make_root(
    python: str,
    request_env: Mapping[str, str],
    expanded_env: Mapping[str, str],
    protected: Sequence[Path | str | None],
) -> TestRoot | None:
    """One verification's allow list (None where the namespaces cannot be made).
    ``protected`` (the scenario, its solution, suite, evidence) is covered wherever it
    shows inside, as is the harness package; an allowed folder above one is dropped."""
    if not available():
        return None
    named = [Path(p).resolve() for p in protected if p]
    allowed = allow_list(python, request_env, expanded_env)
    ro = tuple(p for p in allowed if not any(p in h.parents for h in named))
    hidden = tuple(dict.fromkeys([*protected_paths(), *named]))
    return TestRoot(ro=ro, hidden=hidden)


def etc_files(uid: int) -> dict[str, str]:
    """The generated ``/etc`` files: root and the test user, loopback only."""
    return {
        "passwd": "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"harness-tests:x:{uid}:{uid}:hidden tests:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\nharness-tests:x:{uid}:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
        "resolv.conf": "",
        "hostname": "harness-tests\n",
    }


def skeleton(root: Path, generated: dict[str, str]) -> tuple[list[Path], list[Path]]:
    """Lay out the test root's skeleton at ``root`` (as ``jailroot.build_skeleton`` does,
    but the allowed ``/etc`` folders become mount points bound read-only rather than
    copies: ``/etc/ssl/certs`` alone is hundreds of links, seconds a command under load).
    Returns (system folders, ``/etc`` folders) to bind read-only."""
    root.mkdir(mode=0o755)
    system: list[Path] = []
    for name in SYSTEM_DIRS:
        src = Path("/") / name
        if src.is_symlink():
            (root / name).symlink_to(os.readlink(src))
        elif src.is_dir():
            (root / name).mkdir()
            system.append(src)
    etc = root / "etc"
    etc.mkdir()
    etc_dirs: list[Path] = []
    for name in ETC_ALLOWED:
        src = Path("/etc") / name
        with contextlib.suppress(OSError):
            if src.is_symlink():
                (etc / name).symlink_to(os.readlink(src))
            elif src.is_dir():
                (etc / name).mkdir()
                etc_dirs.append(src)
            elif src.is_file():
                shutil.copyfile(src, etc / name)
    for name, text in generated.items():
        (etc / name).write_text(text)
    dev = root / "dev"
    dev.mkdir()
    for name in DEVICES:
        (dev / name).touch()
    (dev / "fd").symlink_to("/proc/self/fd")
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        (dev / name).symlink_to(f"/proc/self/fd/{i}")
    for name in ("dev/shm", "proc", "tmp"):
        (root / name).mkdir()
    return system, etc_dirs


def script(
    root: Path,
    system: Sequence[Path],
    binds: Sequence[tuple[Path, bool]],
    hidden: Sequence[Path],
    marker: Path,
) -> str:
    """Shell text that mounts the test root at ``root`` and runs ``"$@"`` (as root, in
    ``unshare_argv``'s namespaces: none of it is seen outside). ``binds``: (path, writable)
    bound at the same path inside, parents first; ``hidden`` covered where they show.
    ``marker`` (a host file out of the test user's reach) is written once every mount is
    made: without it a failed run is the harness's fault, never the code's."""
    q = shlex.quote
    r = str(root)
    lines = ["set -e", "umask 022", f"mount --bind {q(r)} {q(r)}"]
    lines += [f"mount -o bind,ro {q(str(p))} {q(r + str(p))}" for p in system]
    private = q(r + "/etc/ssl/private")  # keys: never, even where /etc/ssl is bound
    lines.append(f"if [ -d {private} ]; then mount -t tmpfs -o size=4k,mode=000 none {private}; fi")
    lines += [f"mount --bind /dev/{n} {q(f'{r}/dev/{n}')}" for n in DEVICES]
    lines += [
        f"mount -t tmpfs -o mode=1777,size=64m harness-shm {q(r + '/dev/shm')}",
        f"mount -t proc proc {q(r + '/proc')}",
        f"mount -t tmpfs -o mode=1777,size={TMP_SIZE} harness-tmp {q(r + '/tmp')}",
    ]
    for path, writable in sorted(binds, key=lambda b: len(b[0].parts)):
        src, inside = q(str(path)), q(r + str(path))
        lines.append(
            f"if [ -d {src} ]; then mkdir -p {inside}; "
            f"else mkdir -p {q(r + str(path.parent))}; touch {inside}; fi"
        )
        lines.append(f"mount -o {'bind' if writable else 'bind,ro'} {src} {inside}")
    for p in hidden:
        inside = q(f"{r}{p}")
        lines.append(
            f"if [ -d {inside} ]; then mount -t tmpfs -o size=4k,mode=000 harness-hidden "
            f"{inside}; elif [ -e {inside} ]; then mount --bind /dev/null {inside}; fi"
        )
    # not ``exec``: this root shell stays the namespace's first process (see jailroot)
    lines += [f"mount -o remount,bind,ro {q(r)}", f": > {q(str(marker))}", '"$@"', 'exit "$?"']
    return "\n".join(lines)


@contextlib.contextmanager
def entered(
    test_root: TestRoot,
    uid: int,
    cmd: Sequence[str],
    cwd: Path,
    writable: Sequence[Path],
    readable: Sequence[Path],
    marker: Path,
) -> Iterator[list[str]]:
    """The argv that runs ``cmd`` as ``uid`` in ``test_root`` from ``cwd``: ``writable``
    (the tree, the test home) and ``readable`` (the builder's output) bound at their own
    paths; ``marker`` is written once the root is mounted. The skeleton is this process's
    own temporary folder, removed afterwards."""
    sysdir = Path(tempfile.mkdtemp(prefix="harness-testroot-"))
    try:
        root = sysdir / "root"
        system, etc_dirs = skeleton(root, etc_files(uid))
        system += etc_dirs
        binds = [(p.resolve(), False) for p in (*test_root.ro, *readable) if p.exists()]
        binds += [(p.resolve(), True) for p in writable if p.exists()]
        drop = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--",
        ]
        text = script(root, system, binds, test_root.hidden, marker)
        yield unshare_argv(text, enter_argv(root, cwd, drop, list(cmd)))
    finally:
        shutil.rmtree(sysdir, ignore_errors=True)
