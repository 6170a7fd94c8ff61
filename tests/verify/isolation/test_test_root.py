"""The hidden tests' root on a host: an allow list, not the host's file system (real
namespaces where the machine allows them; the allow list itself is pure)."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.verify.isolation import test_root
from harness.verify.isolation import test_user as users
from harness.verify.isolation.test_root import TestRoot, allow_list, make_root, script
from harness.verify.isolation.test_user import TestUser, run_reaped, statement

pytestmark = pytest.mark.unit

needs_namespaces = pytest.mark.skipif(
    not test_root.available(), reason="private namespaces need root with unshare and mount"
)


def test_the_allow_list_is_the_interpreter_and_the_folders_the_request_names(
    tmp_path: Path,
) -> None:
    deps, mods = tmp_path / "deps", tmp_path / "mod"
    deps.mkdir()
    mods.mkdir()
    env = {"PYTHONPATH": f"{deps}:$PYTHONPATH", "GOMODCACHE": str(mods), "ROOT": "/", "X": "1"}
    allowed = allow_list(sys.executable, env, {"PATH": "/usr/bin:/bin"})
    assert deps in allowed and mods in allowed
    assert Path(sys.base_prefix).resolve() in allowed or sys.base_prefix.startswith("/usr")
    assert Path("/") not in allowed
    assert not any(p == Path("/usr") or Path("/usr") in p.parents for p in allowed)


def test_a_named_folder_above_a_protected_one_is_not_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(test_root, "available", lambda: True)
    project, deps = tmp_path / "project", tmp_path / "project" / "venv"
    (project / "scenarios" / "s").mkdir(parents=True)
    deps.mkdir()
    env = {"VIRTUAL_ENV": str(deps), "PYTHONPATH": str(project)}
    made = make_root(sys.executable, env, {}, [project / "scenarios" / "s"])
    assert made is not None
    assert deps in made.ro and project not in made.ro
    assert (project / "scenarios" / "s") in made.hidden


def test_the_root_script_binds_read_only_covers_and_marks(tmp_path: Path) -> None:
    text = script(
        tmp_path / "root",
        [Path("/usr")],
        [
            (Path("/opt/tool"), Path("/opt/tool"), False),
            (Path("/tmp/tree"), Path("/tmp/tree"), True),
        ],
        [Path("/opt/tool/secret")],
        tmp_path / "entered",
    )
    assert f"mount -o bind,ro /usr {tmp_path}/root/usr" in text
    assert f"mount -o bind,ro /opt/tool {tmp_path}/root/opt/tool" in text
    assert f"mount -o bind /tmp/tree {tmp_path}/root/tmp/tree" in text
    assert "harness-hidden" in text and f"{tmp_path}/root/opt/tool/secret" in text
    # the mark comes after every mount, before the command
    assert text.index(f": > {tmp_path}/entered") > text.index("harness-hidden")
    assert text.index(f": > {tmp_path}/entered") < text.index('"$@"')


PROBE = """
import os, sys
secret, tree = sys.argv[1], sys.argv[2]
print("uid", os.getuid())
try:
    print("READ", open(secret).read().strip())
except OSError as exc:
    print("blocked-secret", type(exc).__name__)
for path in ("/root", "/work", "/home", "/var", "/run"):
    if os.path.isdir(path):
        print("LISTED", path, sorted(os.listdir(path)))
pids = [p for p in os.listdir("/proc") if p.isdigit()]
argvs = []
for p in pids:
    try:
        argvs.append(open(f"/proc/{p}/cmdline", "rb").read().replace(b"\\0", b" ").decode())
    except OSError:
        pass
seen = any(a.startswith(sys.argv[3]) for a in argvs)  # the controller's own command
print("PIDS", len(pids), "CONTROLLER" if seen else "no-controller")
for where in ("/tmp", "/run/lock", "/var/tmp"):
    try:
        open(f"{where}/left-{os.environ['TOKEN']}", "w").write("x")
        print("WROTE", where)
    except OSError:
        print("blocked-write", where)
open(os.path.join(tree, "written"), "w").write("ok")
print("tree-written")
"""


@needs_namespaces
def test_the_test_command_sees_only_its_allow_list(tmp_path: Path) -> None:
    """A world-readable host file, root's home, the project, the host's processes, the
    shared writable folders: out of reach (all of them were in reach of uid 61001)."""
    token = "harness-token-" + secrets.token_hex(6)
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    tmp_path.chmod(0o755)
    secret = outside / "secret.txt"
    secret.write_text(token + "\n")
    secret.chmod(0o644)
    tree = tmp_path / "tree"
    tree.mkdir()
    os.chown(tree, 61001, 61001)
    root = make_root(sys.executable, {}, {"PATH": os.environ["PATH"]}, [tmp_path / "scenario"])
    assert root is not None
    user = TestUser(61001, False, root)
    with users.test_home(61001) as home:
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "TMPDIR": str(home / "tmp")}
        env["TOKEN"] = token
        mine = Path("/proc/self/cmdline").read_bytes().replace(b"\0", b" ").decode()
        cmd = [sys.executable, "-I", "-c", PROBE, str(secret), str(tree), mine]
        ran = run_reaped(cmd, tree, env, 60, user)
    out = ran.output
    assert ran.returncode == 0, out
    assert "uid 61001" in out and "blocked-secret" in out and token not in out.split("TOKEN")[0]
    assert "READ" not in out
    for listed in [line for line in out.splitlines() if line.startswith("LISTED")]:
        assert listed.startswith("LISTED /root"), listed  # only the interpreter's way in
        assert "'.bashrc'" not in listed and "'.cache'" not in listed
    assert "no-controller" in out and "PIDS 2 " in out  # its shell and itself
    assert "blocked-write /run/lock" in out and "blocked-write /var/tmp" in out
    assert "WROTE /tmp" in out  # its private /tmp: gone with the run
    assert not (Path("/tmp") / f"left-{token}").exists()
    assert (tree / "written").read_text() == "ok"
    assert "allow-list root" in statement(user)


@needs_namespaces
def test_a_root_that_cannot_be_made_is_the_harness_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = TestUser(61001, False, TestRoot(ro=()))
    env = {"PATH": os.environ["PATH"]}
    tmp_path.chmod(0o755)
    ran = run_reaped(["sh", "-c", "exit 32"], tmp_path, env, 30, user)
    assert ran.returncode == 32  # the code's own status, after the root was made
    monkeypatch.setattr(test_root, "script", lambda *a: "echo cannot mount >&2; exit 32")
    with pytest.raises(InfraError, match="cannot mount"):
        run_reaped(["sh", "-c", "exit 0"], tmp_path, env, 30, user)


@needs_namespaces
def test_a_toolchain_named_through_a_symlink_is_seen_where_the_request_spells_it(
    tmp_path: Path,
) -> None:
    """A pinned Go in the harness cache reached through a symlinked cache folder (the
    request's ``GOROOT`` keeps the symlink's spelling): bound at the spelling as well as
    where it resolves ("go: cannot find GOROOT directory" in the root before)."""
    tmp_path.chmod(0o755)
    real = tmp_path / "real-cache" / "toolchains" / "go-1.0" / "go"
    (real / "bin").mkdir(parents=True)
    (real / "VERSION").write_text("go1.0-test\n")
    cache = tmp_path / "own-cache"
    cache.mkdir()
    (cache / "toolchains").symlink_to(tmp_path / "real-cache" / "toolchains")
    goroot = cache / "toolchains" / "go-1.0" / "go"
    env = {"GOROOT": str(goroot), "PATH": "/usr/bin:/bin"}
    root = make_root(sys.executable, env, env, [tmp_path / "scenario"])
    assert root is not None and goroot in root.ro and real in root.ro
    with users.test_home(61001) as home:
        cmd = ["sh", "-c", 'cat "$GOROOT/VERSION"; touch "$GOROOT/w" || echo read-only']
        ran = run_reaped(cmd, home, {**env, "HOME": str(home)}, 30, TestUser(61001, False, root))
    assert "go1.0-test" in ran.output and "read-only" in ran.output, ran.output
    assert not (real / "w").exists()


@needs_namespaces
def test_a_needed_folder_inside_a_hidden_one_is_still_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deeper mount wins: a cover over a protected folder (the harness package, say)
    inside an allowed one does not hide a dependency the request names inside it, and
    the cover still hides, and lists, nothing else."""
    tmp_path.chmod(0o755)
    allowed = tmp_path / "allowed"
    hidden = allowed / "hidden"
    deps = hidden / "deps"
    deps.mkdir(parents=True)
    (deps / "mod.txt").write_text("dependency\n")
    (hidden / "secret.txt").write_text("solution\n")
    (allowed / "lib.txt").write_text("library\n")
    for p in (allowed, hidden, deps):
        p.chmod(0o755)
    monkeypatch.setattr(test_root, "protected_paths", lambda: [hidden])
    env = {"ALLOWED": str(allowed), "DEPS": str(deps), "PATH": "/usr/bin:/bin"}
    root = make_root(sys.executable, env, env, [])
    assert root is not None and deps in root.ro and allowed in root.ro
    probe = 'cat "$ALLOWED/lib.txt" "$DEPS/mod.txt"; cat "$1/secret.txt" || echo no-secret\n'
    probe += 'ls "$1" || echo no-list'
    with users.test_home(61001) as home:
        cmd = ["sh", "-c", probe, "probe", str(hidden)]
        ran = run_reaped(cmd, home, {**env, "HOME": str(home)}, 30, TestUser(61001, False, root))
    assert "library" in ran.output and "dependency" in ran.output, ran.output
    assert "solution" not in ran.output and "no-secret" in ran.output
    assert "no-list" in ran.output
