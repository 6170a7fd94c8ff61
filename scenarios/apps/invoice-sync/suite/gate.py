"""A write gate: the app's file-changing system calls wait on the scorer, one at a time.

A kill sent when the scorer *notices* a write lands wherever the app has got to by then:
on a fast disk that is hundreds of writes later, and a start that is unsafe only for a
moment looks safe. The gate makes the kill point exact instead. Before the app's command
runs, a launcher (this file run as a script, outside the jail, stdlib only) installs a
seccomp filter whose user notification stops every call that can change a file (write,
rename, truncate, create, unlink, ...) until the scorer answers; the filter outlives
``exec`` and the app cannot remove it. The scorer (``WriteGate``, another process) reads
the data folder's inotify events at each stop: the events there come from the one call
let through before, finished. So it counts the calls that changed the data folder, and
after the ``nth`` it SIGKILLs the process group while the next call waits: the files are
exactly as the ``nth`` write left them, on any machine at any speed.

Where seccomp's user notification is not available (another OS or architecture, or a
kernel that refuses it), the launcher says why and runs the app ungated; the caller
reports the kills as asynchronous.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import select
import socket
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

# -- the filter (Linux uapi values) ------------------------------------------------------

_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}  # AUDIT_ARCH_*
_SECCOMP_NR = {"x86_64": 317, "aarch64": 277}
_GATED = {  # the calls that can change a file's bytes or a folder's entries
    "x86_64": {
        "write": 1,
        "open": 2,
        "pwrite64": 18,
        "writev": 20,
        "sendfile": 40,
        "truncate": 76,
        "ftruncate": 77,
        "rename": 82,
        "mkdir": 83,
        "rmdir": 84,
        "creat": 85,
        "link": 86,
        "unlink": 87,
        "symlink": 88,
        "mknod": 133,
        "openat": 257,
        "mkdirat": 258,
        "mknodat": 259,
        "unlinkat": 263,
        "renameat": 264,
        "linkat": 265,
        "symlinkat": 266,
        "splice": 275,
        "fallocate": 285,
        "pwritev": 296,
        "renameat2": 316,
        "copy_file_range": 326,
        "pwritev2": 328,
        "io_uring_setup": 425,
        "openat2": 437,
    },
    "aarch64": {
        "mkdirat": 34,
        "unlinkat": 35,
        "symlinkat": 36,
        "linkat": 37,
        "renameat": 38,
        "truncate": 45,
        "ftruncate": 46,
        "fallocate": 47,
        "openat": 56,
        "write": 64,
        "writev": 66,
        "pwrite64": 68,
        "pwritev": 70,
        "sendfile": 71,
        "splice": 76,
        "renameat2": 276,
        "copy_file_range": 285,
        "pwritev2": 287,
        "io_uring_setup": 425,
        "openat2": 437,
    },
}
_RET_ALLOW, _RET_USER_NOTIF = 0x7FFF0000, 0x7FC00000
_LD_ABS_W, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_OPEN_CHANGES = 0o1 | 0o2 | 0o100 | 0o1000  # O_WRONLY | O_RDWR | O_CREAT | O_TRUNC
_SET_MODE_FILTER, _FLAG_NEW_LISTENER, _PR_SET_NO_NEW_PRIVS = 1, 1 << 3, 38
_NOTIF_RECV, _NOTIF_SEND = 0xC0502100, 0xC0182101  # _IOWR('!', 0|1, notif(80)|resp(24))
_NOTIF_SIZE, _FLAG_CONTINUE = 80, 1

_IN_MODIFY, _IN_CREATE, _IN_MOVED_FROM, _IN_MOVED_TO, _IN_DELETE = 0x2, 0x100, 0x40, 0x80, 0x200
_IN_ATTRIB, _IN_ISDIR = 0x4, 0x40000000
_WATCHED = _IN_MODIFY | _IN_CREATE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE | _IN_ATTRIB


def _machine() -> str:
    machine = platform.machine()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine.lower(), machine)


def filter_program(machine: str) -> bytes:
    """The BPF program: this architecture's gated calls stop for the scorer, all else runs.

    An ``open``/``openat`` stops only when its flags can change something (write access,
    create, truncate); ``openat2`` passes its flags by pointer, so it always stops.
    """
    gated = _GATED[machine]
    flags_at = (("openat", 32), ("open", 24))  # seccomp_data.args[2] / args[1]
    opens = {gated[name]: offset for name, offset in flags_at if name in gated}
    others = sorted(set(gated.values()) - set(opens))
    code: list[tuple[int, str | int, str | int, int]] = [
        (_LD_ABS_W, 0, 0, 4),
        (_JEQ_K, 1, 0, _ARCH[machine]),
        (_RET_K, 0, 0, _RET_ALLOW),
        (_LD_ABS_W, 0, 0, 0),
    ]
    code += [(_JEQ_K, f"open{nr}", 0, nr) for nr in opens]
    code += [(_JEQ_K, "notify", 0, nr) for nr in others]
    code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels: dict[str, int] = {}
    for nr, offset in opens.items():
        labels[f"open{nr}"] = len(code)
        code += [(_LD_ABS_W, 0, 0, offset), (_JSET_K, "notify", 0, _OPEN_CHANGES)]
        code.append((_RET_K, 0, 0, _RET_ALLOW))
    labels["notify"] = len(code)
    code.append((_RET_K, 0, 0, _RET_USER_NOTIF))

    def jump(at: int, to: str | int) -> int:
        return labels[to] - at - 1 if isinstance(to, str) else to

    return b"".join(
        struct.pack("HBBI", op, jump(at, jt), jump(at, jf), k)
        for at, (op, jt, jf, k) in enumerate(code)
    )


def install() -> int:
    """Install the filter on this process (inherited by what it execs); its listener fd."""
    machine = _machine()
    if sys.platform != "linux" or machine not in _ARCH:
        raise OSError(0, f"no write gate on {sys.platform}/{machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) refused")
    program = filter_program(machine)
    code = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HxxxxxxP", len(program) // 8, ctypes.addressof(code))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    libc.syscall.restype = ctypes.c_long
    fd = int(
        libc.syscall(
            ctypes.c_long(_SECCOMP_NR[machine]),
            ctypes.c_long(_SET_MODE_FILTER),
            ctypes.c_long(_FLAG_NEW_LISTENER),
            prog,
        )
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp user notification refused: {os.strerror(err)}")
    return fd


def launch(argv: Sequence[str]) -> None:
    """The launcher: ``gate.py SOCKET -- COMMAND...``: gate, hand the listener over, exec."""
    where, command = argv[0], list(argv[2:])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(where)
        try:
            fd = install()
        except OSError as exc:
            conn.sendall(f"ungated: {exc.strerror or exc}".encode())
        else:
            socket.send_fds(conn, [b"gated"], [fd])
            os.close(fd)
    os.execvp(command[0], command)


# -- the scorer's side ---------------------------------------------------------------------


class WriteGate:
    """Counts the calls that changed the data folder; SIGKILLs after the ``nth``.

    ``wrap(argv)`` is the command that runs ``argv`` gated (it connects back here).
    ``nth=0`` never kills: the gate only counts (``writes``), to measure a start.
    """

    def __init__(self, data: Path, where: Path, kill: Callable[[], None], nth: int = 0) -> None:
        self._data, self._kill, self.nth = data, kill, nth
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
        self._inotify = int(self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        self._where = str(where)
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(self._where)
        self._server.listen(1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="write-gate", daemon=True)
        self.writes = 0
        self.gated: bool | None = None  # None until the launcher reported
        self.reason = ""
        self.detail = ""
        self.fired = threading.Event()
        self._counted = True  # the call in flight already counted (none in flight yet)

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return [sys.executable, str(Path(__file__).resolve()), self._where, "--", *argv]

    def __enter__(self) -> WriteGate:
        if self._inotify < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        for folder in [self._data, *(p for p in self._data.rglob("*") if p.is_dir())]:
            self._libc.inotify_add_watch(self._inotify, str(folder).encode(), _WATCHED)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5.0)
        self._server.close()
        with contextlib.suppress(OSError):
            os.unlink(self._where)
        os.close(self._inotify)

    def _run(self) -> None:
        """Serve the gated start's stops; a start the kit repeats (its port was taken)
        connects again, and its listener replaces the dead one's."""
        self._server.setblocking(False)
        poller = select.poll()
        poller.register(self._server, select.POLLIN)
        poller.register(self._inotify, select.POLLIN)
        notif = ctypes.create_string_buffer(_NOTIF_SIZE)
        listener: int | None = None
        try:
            while not self._stop.is_set():
                ready = dict(poller.poll(100))
                if self._drain() and self._reached():
                    return  # the call in flight has changed the folder: killed after it
                if self._server.fileno() in ready:
                    if listener is not None:
                        poller.unregister(listener)
                        os.close(listener)
                    listener = self._take()
                    if listener is not None:
                        poller.register(listener, select.POLLIN)
                    continue
                if listener is None or listener not in ready:
                    continue
                if not ready[listener] & select.POLLIN:  # hung up: its processes are gone
                    poller.unregister(listener)
                    os.close(listener)
                    listener = None
                    continue
                if self._answer(listener, notif):
                    return
        finally:
            if listener is not None:
                os.close(listener)

    def _take(self) -> int | None:
        """A launcher's connection: its listener fd, or None when it runs ungated (the
        kill then follows the events, asynchronously)."""
        try:
            conn, _ = self._server.accept()
        except BlockingIOError:
            return None
        with conn:
            conn.settimeout(10.0)
            msg, fds, _, _ = socket.recv_fds(conn, 512, 1)
        self.gated = bool(fds)
        self.reason = "" if fds else msg.decode(errors="replace")
        self._counted = True  # nothing of this start in flight yet
        return fds[0] if fds else None

    def _answer(self, listener: int, notif: ctypes.Array[ctypes.c_char]) -> bool:
        """Take one stopped call; True when the start was killed while it waits."""
        ctypes.memset(notif, 0, _NOTIF_SIZE)
        if self._libc.ioctl(listener, _NOTIF_RECV, notif) != 0:
            return False  # its caller died meanwhile
        # the call before this one has returned: its events are all queued
        if self._drain() and self._reached():
            return True  # killed while this call waits: it never runs
        self._counted = False  # this call now runs
        (ident,) = struct.unpack_from("Q", notif.raw, 0)
        resp = ctypes.create_string_buffer(struct.pack("QqiI", ident, 0, 0, _FLAG_CONTINUE), 24)
        self._libc.ioctl(listener, _NOTIF_SEND, resp)
        return False

    def _drain(self) -> bool:
        """Read the queued events; True when the call in flight changed the data folder."""
        changed = False
        while True:
            try:
                raw = os.read(self._inotify, 65536)
            except BlockingIOError:
                break
            at = 0
            while at + 16 <= len(raw):
                _, mask, _, size = struct.unpack_from("iIII", raw, at)
                name = raw[at + 16 : at + 16 + size].rstrip(b"\0").decode("utf-8", "replace")
                at += 16 + size
                if mask & _IN_ISDIR and mask & _IN_CREATE:
                    self._watch_new_folder(name)
                self.detail = f"{name or 'folder'} {_kind(mask)}"
                changed = True
        if changed and (not self._counted or self.gated is False):
            self._counted = True
            self.writes += 1
            return True
        return False

    def _watch_new_folder(self, name: str) -> None:
        for folder in self._data.rglob(name):
            if folder.is_dir():
                self._libc.inotify_add_watch(self._inotify, str(folder).encode(), _WATCHED)

    def _reached(self) -> bool:
        if not self.nth or self.writes < self.nth or self.fired.is_set():
            return False
        self._kill()
        self.fired.set()
        return True


def _kind(mask: int) -> str:
    for bit, word in (
        (_IN_CREATE, "created"),
        (_IN_MOVED_TO, "renamed in"),
        (_IN_MOVED_FROM, "renamed out"),
        (_IN_DELETE, "deleted"),
        (_IN_ATTRIB, "attributes"),
    ):
        if mask & bit:
            return word
    return "modified"


if __name__ == "__main__":
    launch(sys.argv[1:])
