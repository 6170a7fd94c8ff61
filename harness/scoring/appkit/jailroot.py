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

import shlex
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
DEVICES = ("null", "zero", "full", "random", "urandom")


def unshare_argv(script: str, args: Sequence[str] = ()) -> list[str]:
    """``sh -c script`` as root in fresh mount and PID namespaces (the one copy of it)."""
    return [
        "unshare",
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


def _ro_bind(src: str, dst: str) -> list[str]:
    s, d = shlex.quote(src), shlex.quote(dst)
    return [f"mount --rbind {s} {d}", f"mount -o remount,bind,ro {d}"]


def root_script(
    root: Path,
    home: Path,
    etc: Path,
    hidden: Sequence[Path],
    extra_ro: Sequence[Path] = (),
) -> str:
    """Shell text that builds the minimal root at ``root`` and ends in ``exec "$@"``.

    ``home`` is the jail's home (bound writable at the same path), ``etc`` a folder of
    generated files copied into ``/etc``, ``hidden`` paths covered when they show inside,
    ``extra_ro`` more folders bound read-only (an interpreter outside ``/usr``). It runs
    as root inside ``unshare_argv``; ``"$@"`` then runs inside the new root.
    """
    r = str(root)
    q = shlex.quote
    lines = ["set -e", f"mount -t tmpfs -o mode=0755,size=4m harness-root {q(r)}"]
    for name in SYSTEM_DIRS:
        src, dst = f"/{name}", f"{r}/{name}"
        lines.append(
            f'if [ -L {src} ]; then ln -s "$(readlink {src})" {q(dst)}; '
            f"elif [ -d {src} ]; then mkdir {q(dst)} && {' && '.join(_ro_bind(src, dst))}; fi"
        )
    for path in extra_ro:
        dst = f"{r}{path}"
        lines.append(f"mkdir -p {q(dst)}")
        lines += _ro_bind(str(path), dst)
    lines.append(f"mkdir -p {q(r + '/etc')}")
    for name in ETC_ALLOWED:
        src, dst = f"/etc/{name}", f"{r}/etc/{name}"
        bind = " && ".join(_ro_bind(src, dst))
        lines.append(
            f"if [ -d {q(src)} ]; then mkdir {q(dst)} && {bind}; "
            f"elif [ -e {q(src)} ]; then cp -L {q(src)} {q(dst)}; fi"
        )
    lines.append(f"cp {q(str(etc))}/* {q(r + '/etc/')}")
    dev = f"{r}/dev"
    lines += [
        f"mkdir {q(dev)}",
        f"mount -t tmpfs -o mode=0755,size=64k harness-dev {q(dev)}",
    ]
    for name in DEVICES:
        lines += [f"touch {q(dev + '/' + name)}", f"mount --bind /dev/{name} {q(dev + '/' + name)}"]
    lines += [
        f"ln -s /proc/self/fd {q(dev + '/fd')}",
        *(
            f"ln -s /proc/self/fd/{i} {q(dev + '/' + n)}"
            for i, n in enumerate(("stdin", "stdout", "stderr"))
        ),
        f"mkdir {q(dev + '/shm')}",
        f"mount -t tmpfs -o mode=1777,size=64m harness-shm {q(dev + '/shm')}",
        f"mkdir {q(r + '/proc')}",
        f"mount -t proc proc {q(r + '/proc')}",
        f"mkdir {q(r + '/tmp')}",
        f"mount -t tmpfs -o mode=1777,size=256m harness-tmp {q(r + '/tmp')}",
        f"mkdir -p {q(r + str(home))}",
        f"mount --bind {q(str(home))} {q(r + str(home))}",
    ]
    for p in hidden:
        inside = q(f"{r}{p}")
        lines.append(
            f"if [ -d {inside} ]; then mount -t tmpfs -o size=4k,mode=000 harness-hidden {inside}; "
            f"elif [ -e {inside} ]; then mount --bind /dev/null {inside}; fi"
        )
    lines += [f"mount -o remount,ro {q(r)}", 'exec "$@"']
    return "\n".join(lines)


def enter_argv(root: Path, cwd: Path, drop: Sequence[str], argv: Sequence[str]) -> list[str]:
    """What ``"$@"`` of ``root_script`` is: chroot, drop privileges, chdir, run."""
    return ["chroot", str(root), *drop, "env", f"--chdir={cwd}", "--", *argv]
