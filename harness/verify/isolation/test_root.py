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
covered. The pieces are the app jail's (``appkit.jailroot``: ``unshare_argv``,
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

from harness.appkit.jail import detect_mode, protected_paths
from harness.appkit.jailroot import (
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


def _both(path: Path | str) -> list[Path]:
    """``path`` as the request names it (symlinks kept: a variable holds that spelling)
    and as it resolves (where its symlinks lead inside the root)."""
    literal = Path(os.path.abspath(path))
    real = literal.resolve()
    return [literal] if real == literal else [literal, real]


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
        found += [Path(exe).parent.parent, Path(exe).resolve().parent.parent]
    return tuple(found)


def _go_root(env: Mapping[str, str]) -> list[Path]:
    """The Go toolchain the request's PATH finds: the ``PATH`` entry holding ``go`` and
    the folder above its bin, as spelled there and where its symlinks lead."""
    go = shutil.which("go", path=env.get("PATH"))
    if not go:
        return []
    return [Path(go).parent, Path(go).parent.parent, Path(go).resolve().parent.parent]


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
    python: str,
    request_env: Mapping[str, str],
    expanded_env: Mapping[str, str],
) -> tuple[Path, ...]:
    """The read-only folders a test command needs, each where the root shows it: system
    folders aside, the interpreter's prefixes, the Go toolchain, the request's named
    folders (a pinned Go in the harness cache through its ``GOROOT`` and ``PATH``), at
    the spelling the request uses *and* where its symlinks lead (a ``GOROOT`` through a
    symlinked cache is looked up by that name); never ``/`` nor anything under a system
    folder (shown already). Nothing of the cache the request does not name: a folder
    that exists inside tells the code under test where it runs."""
    picked = [*_python_prefixes(python), *_go_root(expanded_env), *_named_paths(request_env)]
    out: list[Path] = []
    for path in picked:
        for inside in _both(path):
            if inside == Path("/") or _covered(inside, SYSTEM) or inside in out:
                continue
            out.append(inside)
    return tuple(sorted(out))


def _needed(ro: Sequence[Path], hidden: Sequence[Path]) -> tuple[Path, ...]:
    """``ro`` without the folders an allowed ancestor shows already (a second bind of
    the same content), unless a hidden path lies between them: there the deeper bind
    must be made after the cover, or the needed folder would be hidden."""

    def between(q: Path, p: Path) -> bool:
        return any(q in h.parents and (h == p or h in p.parents) for h in hidden)

    out: list[Path] = []
    for p in sorted(set(ro), key=lambda q: len(q.parts)):
        if not any(q in p.parents and not between(q, p) for q in out):
            out.append(p)
    return tuple(sorted(out))


def make_root(
    python: str,
    request_env: Mapping[str, str],
    expanded_env: Mapping[str, str],
    protected: Sequence[Path | str | None],
) -> TestRoot | None:
    """One verification's allow list (None where the namespaces cannot be made).
    ``protected`` (the scenario, its solution, suite, evidence) is covered wherever it
    shows inside, as is the harness package; an allowed folder above one is dropped. A
    needed folder inside a covered one is still bound (after the cover)."""
    if not available():
        return None
    named = [Path(p).resolve() for p in protected if p]
    allowed = allow_list(python, request_env, expanded_env)
    ro = [p for p in allowed if not any(p in h.parents for h in named)]
    hidden = tuple(dict.fromkeys([*protected_paths(), *named]))
    return TestRoot(ro=_needed(ro, hidden), hidden=hidden)


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


def _mounts(r: str, binds: Sequence[tuple[Path, Path, bool]], hidden: Sequence[Path]) -> list[str]:
    """The binds and covers, shallow first, a cover before a bind of the same depth: the
    deeper (more specific) one wins, so a protected path inside an allowed folder is
    covered and a needed folder inside a covered one is still shown. A cover with a
    needed folder below it may be crossed (0711), never listed."""
    q = shlex.quote
    steps: list[tuple[int, int, str]] = []
    for src, path, writable in binds:
        inside = q(r + str(path))
        made = (
            f"if [ -d {q(str(src))} ]; then mkdir -p {inside}; "
            f"else mkdir -p {q(r + str(path.parent))}; touch {inside}; fi; "
        )
        mode = "bind" if writable else "bind,ro"
        steps.append((len(path.parts), 1, f"{made}mount -o {mode} {q(str(src))} {inside}"))
    for p in hidden:
        inside = q(f"{r}{p}")
        below = any(p in path.parents for _, path, _ in binds)
        steps.append(
            (
                len(p.parts),
                0,
                f"if [ -d {inside} ]; then mount -t tmpfs -o size=4k,mode="
                f"{'711' if below else '000'} harness-hidden {inside}; "
                f"elif [ -e {inside} ]; then mount --bind /dev/null {inside}; fi",
            )
        )
    return [text for _, _, text in sorted(steps, key=lambda s: (s[0], s[1]))]


def script(
    root: Path,
    system: Sequence[Path],
    binds: Sequence[tuple[Path, Path, bool]],
    hidden: Sequence[Path],
    marker: Path,
) -> str:
    """Shell text that mounts the test root at ``root`` and runs ``"$@"`` (as root, in
    ``unshare_argv``'s namespaces: none of it is seen outside). ``binds``: (source,
    path inside, writable); ``hidden`` covered where they show (``_mounts``: the deeper
    wins). ``marker`` (a host file out of the test user's reach) is written once every
    mount is made: without it a failed run is the harness's fault, never the code's.
    The mounts run on a clean ``PATH``; ``"$@"`` (absolute tools) gets the command's."""
    q = shlex.quote
    r = str(root)
    lines = [
        "set -e",
        "umask 022",
        'harness_path="${PATH-}"',
        f"PATH={_CLEAN_PATH}",
        f"mount --bind {q(r)} {q(r)}",
    ]
    lines += [f"mount -o bind,ro {q(str(p))} {q(r + str(p))}" for p in system]
    private = q(r + "/etc/ssl/private")  # keys: never, even where /etc/ssl is bound
    lines.append(f"if [ -d {private} ]; then mount -t tmpfs -o size=4k,mode=000 none {private}; fi")
    lines += [f"mount --bind /dev/{n} {q(f'{r}/dev/{n}')}" for n in DEVICES]
    lines += [
        f"mount -t tmpfs -o mode=1777,size=64m harness-shm {q(r + '/dev/shm')}",
        f"mount -t proc proc {q(r + '/proc')}",
        f"mount -t tmpfs -o mode=1777,size={TMP_SIZE} harness-tmp {q(r + '/tmp')}",
    ]
    lines += _mounts(r, binds, hidden)
    # not ``exec``: this root shell stays the namespace's first process (see jailroot)
    lines += [f"mount -o remount,bind,ro {q(r)}", f": > {q(str(marker))}"]
    lines += ['PATH="$harness_path"', '"$@"', 'exit "$?"']
    return "\n".join(lines)


def _tool(name: str) -> str:
    return shutil.which(name, path=_CLEAN_PATH) or name


def _argv(text: str, root: Path, cwd: Path, uid: int, cmd: Sequence[str]) -> list[str]:
    """``unshare_argv`` then ``enter_argv`` with every tool of harness's own by its full
    path: the command's ``PATH`` (``/usr/bin:/bin``, a venv's) need not hold them."""
    drop = [_tool("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    drop += ["--no-new-privs", "--"]
    inner = enter_argv(root, cwd, drop, list(cmd))
    inner[0] = _tool(inner[0])  # chroot
    at = inner.index(f"--chdir={cwd}") - 1
    inner[at] = _tool(inner[at])  # env
    outer = unshare_argv(text, inner)
    head = [_tool(a) if a in ("setpriv", "unshare", "sh") else a for a in outer[: -len(inner)]]
    return head + inner


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
        seen: set[Path] = set()
        binds: list[tuple[Path, Path, bool]] = []
        for group, writes in ((writable, True), (test_root.ro, False), (readable, False)):
            for given in group:
                for path in _both(given) if given.exists() else []:
                    if path not in seen and not _covered(path, SYSTEM):
                        seen.add(path)
                        binds.append((path.resolve(), path, writes))
        text = script(root, system, binds, test_root.hidden, marker)
        yield _argv(text, root, cwd, uid, cmd)
    finally:
        shutil.rmtree(sysdir, ignore_errors=True)
