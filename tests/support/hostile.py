"""A hostile agent's escape attempts, run inside an agent container (stdlib only).

``python3 hostile.py '<json targets>' [gateway-host:port]`` tries each way out and prints
one line ``HOSTILE {"attempt": reached, ...}``: ``true`` means the attempt got through.
The targets are ``{"forbidden": {"name": [host, port]}}``: listeners the test started
(on the host, in another trial's container) that must stay out of reach; the trial's
gateway must be reachable (the control). Every attempt is harmless if it succeeds (it
rewrites a value with itself, asks sysrq for help, ...).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import socket
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
SYS_INIT_MODULE = 175  # x86_64
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def connects(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def raises(action) -> bool:  # type: ignore[no-untyped-def]
    """True when ``action`` got through (did not raise)."""
    try:
        action()
    except OSError:
        return False
    return True


def raw_socket() -> bool:
    return raises(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))


def packet_socket() -> bool:
    return raises(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))


def mount_tmpfs() -> bool:
    os.makedirs("/tmp/hostile-mnt", exist_ok=True)
    return LIBC.mount(b"none", b"/tmp/hostile-mnt", b"tmpfs", 0, None) == 0


def ptrace_init() -> bool:
    ok = LIBC.ptrace(PTRACE_ATTACH, 1, None, None) == 0
    if ok:
        LIBC.ptrace(PTRACE_DETACH, 1, None, None)
    return ok


def load_module() -> bool:
    LIBC.syscall(SYS_INIT_MODULE, None, 0, b"")
    return ctypes.get_errno() != errno.EPERM


def sysrq() -> bool:
    def write() -> None:
        with open("/proc/sysrq-trigger", "w") as fh:
            fh.write("h")  # help: prints the key list to the kernel log

    return raises(write)


def sys_write() -> bool:
    path = "/sys/class/net/lo/mtu"

    def write() -> None:
        with open(path) as fh:
            value = fh.read()
        with open(path, "w") as fh:
            fh.write(value)

    return raises(write)


def kill_keepalive() -> bool:
    me = os.getuid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != me:
                os.kill(int(pid), 0)  # signal 0: permission check only
                return True
        except OSError:
            continue
    return False


def host_processes() -> bool:
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read()
        except OSError:
            continue
        if b"dockerd" in cmd or b"containerd" in cmd or b"pytest" in cmd:
            return True
    return False


def user_namespace() -> bool:
    clone_newuser = 0x10000000
    return LIBC.unshare(clone_newuser) == 0


def become_root() -> bool:
    return raises(lambda: os.setuid(0))


def write_root_fs() -> bool:
    def write() -> None:
        with open("/usr/local/bin/hostile", "w") as fh:
            fh.write("x")

    return raises(write)


def chown_to_root() -> bool:
    path = "/tmp/hostile-chown"
    with open(path, "w"):
        pass
    return raises(lambda: os.chown(path, 0, 0))


def main() -> None:
    targets = json.loads(sys.argv[1])
    out: dict[str, bool] = {
        "docker_socket": any(
            os.path.exists(p) for p in ("/var/run/docker.sock", "/run/docker.sock")
        ),
        "raw_socket": raw_socket(),
        "packet_socket": packet_socket(),
        "mount": mount_tmpfs(),
        "ptrace_outside": ptrace_init(),
        "load_module": load_module(),
        "sysrq_trigger": sysrq(),
        "sys_write": sys_write(),
        "signal_other_uid": kill_keepalive(),
        "host_processes_visible": host_processes(),
        "setuid_root": become_root(),
        "user_namespace": user_namespace(),
        "write_root_fs": write_root_fs(),
        "chown_to_root": chown_to_root(),
        "is_root": os.geteuid() == 0,
    }
    for name, (host, port) in targets.get("forbidden", {}).items():
        out[f"net:{name}"] = connects(host, int(port))
    if len(sys.argv) > 2:  # the trial's gateway, host:port: the control
        host, _, port = sys.argv[2].rpartition(":")
        out["gateway"] = connects(host, int(port))
    print("HOSTILE " + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
