"""The app's minimal root: an allowlist of the machine, built in a private mount namespace.

Under ``--sandbox local`` as root the app does not get the host's file system with a
few folders covered: it gets a fresh root (a tmpfs) holding only what an interpreter
needs, read-only,

- ``/usr`` (with ``/bin``, ``/sbin``, ``/lib*`` as on the host: links into it or
  read-only binds) and the interpreter's own prefix when it lives elsewhere;
- a few ``/etc`` pieces the C library and Python read (``ld.so.*``, ``alternatives``,
  ``localtime``, ``ssl``, ...) plus minimal ``passwd``, ``group``, ``hosts`` and an empty
  ``resolv.conf`` written by the scorer;
- a ``/dev`` with ``null``, ``zero``, ``full``, ``random``, ``urandom``, a private
  ``/dev/shm``, the PID namespace's own ``/proc``,

and, writable, a private ``/tmp`` holding only the jail's home (its tree copy, data and
temp folder, bound at the same path so ``argv`` paths stay valid). Nothing of ``/home``,
``/root``, ``/work``, ``/opt``, ``/var``, the results root or other trials exists in it.
Protected paths that fall inside an allowed folder (an installed harness package under
``/usr``) are still covered, as before. The app enters it with ``chroot`` after the
mounts, then drops to its uid with ``no_new_privs``, so it cannot chroot back out.

Everything here is pure: it returns argv and shell text; ``jail`` runs them.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

#: /etc entries bound read-only when the host has them (no secrets, no host identity)
ETC_ALLOWED = (
    "alternatives",
    "ca-certificates",
    "gai.conf",
    "host.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "protocols",
    "services",
    "ssl",
)
#: top-level entries taken from the host: a link is copied as a link, a folder bound ro
SYSTEM_DIRS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
_NO_KEYS = shutil.ignore_patterns("private")  # /etc/ssl/private: never
DEVICES = ("null", "zero", "full", "random", "urandom")


def unshare_argv(script: str, args: Sequence[str] = (), *, tied: bool = True) -> list[str]:
    """``sh -c script`` as root in fresh mount and PID namespaces (the one copy of it).

    ``tied``: the jail dies with the thread that starts it. ``unshare`` gets a parent-death
    SIGKILL (``setpriv --pdeathsig``) and kills the namespace's first process when it dies
    (``--kill-child``), which takes every process of the PID namespace with it. Without it
    a controller killed with SIGKILL (or before its ``finally``) left the app running.
    Linux ties the death signal to the starting *thread*, so only a start from the main
    thread is tied (see ``Jail.wrap``); a worker thread that ends would kill a live app.
    """
    tie = ["setpriv", "--pdeathsig", "KILL", "--"] if tied else []
    return [
        *tie,
        "unshare",
        "--kill-child",
        "--mount",
        "--pid",
        "--fork",
        "--mount-proc",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "app-jail",
        *args,
    ]


def etc_files(uid: int) -> dict[str, str]:
    """The generated ``/etc`` files: the app's user and loopback only, no host names."""
    return {
        "passwd": f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"app:x:{uid}:{uid}:app under test:/nonexistent:/usr/sbin/nologin\n",
        "group": f"root:x:0:\napp:x:{uid}:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
        "resolv.conf": "",
        "hostname": "app\n",
    }


def build_skeleton(root: Path, generated: dict[str, str]) -> list[Path]:
    """Lay out the minimal root's skeleton at ``root`` (host side, root-owned).

    Links of ``/`` (``/bin -> usr/bin``) are copied as links, folders become mount points,
    the allowed ``/etc`` pieces are copied (links kept as links) beside the generated
    files, ``/dev`` gets mount points for its devices. Returns the system folders
    ``root_script`` binds read-only. Done once per jail, in-process (no commands).
    """
    root.mkdir(mode=0o755, exist_ok=True)
    binds: list[Path] = []
    for name in SYSTEM_DIRS:
        src = Path("/") / name
        if src.is_symlink():
            (root / name).symlink_to(os.readlink(src))
        elif src.is_dir():
            (root / name).mkdir()
            binds.append(src)
    etc = root / "etc"
    etc.mkdir()
    for name in ETC_ALLOWED:
        src = Path("/etc") / name
        with contextlib.suppress(OSError):
            if src.is_dir():
                shutil.copytree(src, etc / name, symlinks=True, ignore=_NO_KEYS)
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
    return binds


def root_script(
    root: Path, home: Path, hidden: Sequence[Path], ro_binds: Sequence[Path] = ()
) -> str:
    """Shell text that mounts the minimal root at ``root`` and then runs ``"$@"``.

    ``root`` holds ``build_skeleton``'s layout; ``ro_binds`` are bound read-only at the
    same paths inside (system folders, an interpreter prefix outside ``/usr``, whose
    mount point must exist in the skeleton); ``home`` (the jail's home) is bound
    writable; ``hidden`` paths are covered when they show inside. It runs as root in
    ``unshare_argv``'s namespaces, so none of these mounts is seen outside.
    """
    q = shlex.quote
    r = str(root)
    lines = ["set -e", f"mount --bind {q(r)} {q(r)}"]
    lines += [f"mount -o bind,ro {q(str(p))} {q(r + str(p))}" for p in ro_binds]
    lines += [f"mount --bind /dev/{n} {q(f'{r}/dev/{n}')}" for n in DEVICES]
    lines += [
        f"mount -t tmpfs -o mode=1777,size=64m harness-shm {q(r + '/dev/shm')}",
        f"mount -t proc proc {q(r + '/proc')}",
        f"mount -t tmpfs -o mode=1777,size=256m harness-tmp {q(r + '/tmp')}",
        f"mkdir -p {q(r + str(home))}",
        f"mount --bind {q(str(home))} {q(r + str(home))}",
    ]
    for p in hidden:
        inside = q(f"{r}{p}")
        lines.append(
            f"if [ -d {inside} ]; then mount -t tmpfs -o size=4k,mode=000 harness-hidden "
            f"{inside}; elif [ -e {inside} ]; then mount --bind /dev/null {inside}; fi"
        )
    # not ``exec``: this root shell stays the namespace's first process, so the death
    # signal ``unshare --kill-child`` gives it survives (dropping to the app's uid clears
    # a process's own); the app is its child and dies with it
    lines += [f"mount -o remount,bind,ro {q(r)}", '"$@"', 'exit "$?"']
    return "\n".join(lines)


def enter_argv(root: Path, cwd: Path, drop: Sequence[str], argv: Sequence[str]) -> list[str]:
    """What ``"$@"`` of ``root_script`` is: chroot, drop privileges, chdir, run."""
    return ["chroot", str(root), *drop, "env", f"--chdir={cwd}", "--", *argv]
