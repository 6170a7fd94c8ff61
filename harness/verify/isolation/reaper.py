"""Run one test command so that nothing of it outlives it (stdlib only, run as a script).

``python3 -I reaper.py --status FILE --timeout S [--uid N [--read-all 1]] -- CMD...``
makes itself a child subreaper (every orphan of the command is re-parented to it, a
double fork and ``setsid`` included), starts CMD in a session of its own, as uid/gid N
with no groups and ``no_new_privs`` when given (the verifier is root; with
``--read-all`` through ``setpriv``, keeping CAP_DAC_READ_SEARCH only), waits for it
(killing it at the timeout), then SIGSTOPs and SIGKILLs every descendant still alive
until none is left. Only then does it write ``{"returncode", "timed_out", "killed"}`` to
FILE, which lies in a folder only the verifier can write. Output goes straight through
(the caller's pipes, which close once every holder is dead).

It is a file of its own (no harness import) so it runs with ``-I`` whatever the test's
environment says, and so the verifier can run it while the harness package is closed to
the test's user.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time

PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
ROUNDS = 200  # kill rounds before giving up on a process that keeps forking


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (from /proc: pid -> parent)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) < 2 or fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            found.append(pid)
            todo.append(pid)
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all() -> int:
    """Stop then kill every descendant, round after round, until none is left."""
    killed: set[int] = set()
    me = os.getpid()
    for _ in range(ROUNDS):
        alive = descendants(me)
        if not alive:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in alive:
                try:
                    os.kill(pid, sig)
                    killed.add(pid)
                except ProcessLookupError:
                    pass
        _reap()
        time.sleep(0.01)
    _reap()
    return len(killed)


def _no_new_privs() -> None:
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def run(cmd: list[str], timeout: float, uid: int | None, read_all: bool) -> dict[str, object]:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    ids: dict[str, object] = {}
    if uid is not None and read_all and shutil.which("setpriv"):  # keeps the one capability
        cap = ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
        ids_args = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *cap]
        cmd = ["setpriv", *ids_args, "--no-new-privs", "--", *cmd]
    elif uid is not None:
        ids = {"user": uid, "group": uid, "extra_groups": []}
    try:
        proc = subprocess.Popen(
            cmd,
            start_new_session=True,
            preexec_fn=_no_new_privs,  # this process has one thread
            **ids,  # type: ignore[call-overload]
        )
    except OSError as exc:
        sys.stderr.write(f"{cmd[0]}: {exc.strerror}\n")
        return {"returncode": 127, "timed_out": False, "killed": 0}
    timed_out = False
    try:
        code: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out, code = True, None
    killed = kill_all()
    if code is None:
        proc.wait()
    return {"returncode": code, "timed_out": timed_out, "killed": killed}


def main(argv: list[str]) -> int:
    split = argv.index("--")
    opts, cmd = argv[:split], argv[split + 1 :]
    values = dict(zip(opts[::2], opts[1::2], strict=True))
    uid = int(values["--uid"]) if "--uid" in values else None
    status = run(cmd, float(values["--timeout"]), uid, values.get("--read-all") == "1")
    tmp = values["--status"] + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(status, fh)
    os.replace(tmp, values["--status"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
