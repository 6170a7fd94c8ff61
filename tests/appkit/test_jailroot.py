"""The minimal root an executed app runs in: its skeleton, mounts and entry
(appkit/jailroot.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.appkit.jailroot import (
    DEVICES,
    build_skeleton,
    enter_argv,
    etc_files,
    root_script,
    unshare_argv,
)

pytestmark = pytest.mark.unit


@pytest.mark.unit
def test_the_root_holds_only_what_is_allowed(tmp_path: Path) -> None:
    binds = build_skeleton(tmp_path / "root", etc_files(61000))
    top = {p.name for p in (tmp_path / "root").iterdir()}
    assert top <= {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev"} | {
        "proc",
        "tmp",
    }
    assert Path("/usr") in binds and not (tmp_path / "root" / "etc" / "ssl" / "private").exists()
    assert "61000" in (tmp_path / "root" / "etc" / "passwd").read_text()
    assert "root:x:0:0" in (tmp_path / "root" / "etc" / "passwd").read_text()
    assert not (tmp_path / "root" / "etc" / "shadow").exists()
    script = root_script(tmp_path / "root", Path("/tmp/h"), [Path("/usr/lib/x/harness")], binds)
    assert f"mount -o bind,ro /usr {tmp_path}/root/usr" in script
    assert "/tmp/h" in script and script.rstrip().endswith('"$@"\nexit "$?"')
    for absent in ("/home", "/root", "/work", "/var", "/opt", "/run", "/sys"):
        assert f" {absent} " not in script
    assert "harness-hidden" in script  # a protected path inside /usr stays covered
    argv = unshare_argv("true", ["a"])
    assert argv[:6] == ["setpriv", "--pdeathsig", "KILL", "--", "unshare", "--kill-child"]
    assert argv[-4:] == ["-c", "true", "app-jail", "a"]
    assert unshare_argv("true", tied=False)[:2] == ["unshare", "--kill-child"]


def test_the_skeleton_has_devices_links_and_the_generated_etc(tmp_path: Path) -> None:
    root = tmp_path / "root"
    build_skeleton(root, {**etc_files(61000), "extra": "x\n"})
    assert sorted(
        p.name for p in (root / "dev").iterdir() if p.is_file() and not p.is_symlink()
    ) == sorted(DEVICES)
    assert os.readlink(root / "dev" / "stderr") == "/proc/self/fd/2"
    assert os.readlink(root / "dev" / "fd") == "/proc/self/fd"
    assert (root / "dev" / "shm").is_dir() and (root / "proc").is_dir()
    assert (root / "etc" / "extra").read_text() == "x\n"
    assert (root / "etc" / "hosts").read_text().startswith("127.0.0.1 localhost\n")
    assert (root / "etc" / "resolv.conf").read_text() == ""  # no name server
    if Path("/bin").is_symlink():
        assert os.readlink(root / "bin") == os.readlink("/bin")  # a link stays a link


def test_the_script_covers_hidden_paths_and_ends_read_only(tmp_path: Path) -> None:
    root = tmp_path / "root"
    script = root_script(root, Path("/h"), [Path("/srv/suite"), Path("/srv/a b")])
    lines = script.splitlines()
    assert lines[0] == "set -e" and lines[1] == f"mount --bind {root} {root}"
    assert f"mount --bind /h {root}/h" in lines
    assert sum("harness-hidden" in line for line in lines) == 2
    assert f"'{root}/srv/a b'" in script  # quoted for the shell
    assert lines[-3] == f"mount -o remount,bind,ro {root}"


def test_entering_is_chroot_then_the_drop_then_the_command() -> None:
    argv = enter_argv(Path("/r"), Path("/app"), ["setpriv", "--reuid=61000"], ["python3", "x"])
    assert argv == [
        "chroot", "/r", "setpriv", "--reuid=61000", "env", "--chdir=/app", "--", "python3", "x",
    ]  # fmt: skip
