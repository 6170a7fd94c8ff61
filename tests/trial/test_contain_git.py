"""Host-side containment, one attack at a time on the git and file layer (issue 22):
whatever an agent writes into its workspace (``.git/config``, attributes, replace refs,
links, pipes, sparse files, odd names), harness's diff, changed-file list, verifier copy
and evidence copy neither run it, nor follow it, nor crash on it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tarfile
from pathlib import Path

import pytest

from harness.backends.local.verify import stage_tree
from harness.results import gab
from harness.util import trialgit
from harness.util.agentfiles import OverCap, copy_tree, data_filter, scrub_tree
from tests.conftest import make_repo

pytestmark = pytest.mark.unit

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n",
    ".gitignore": "build/\n",
}


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, str]:
    """A set-up workspace (one commit) with harness's own git dir beside it."""
    repo, sha = make_repo(tmp_path / "wss" / "ws", FILES)
    trialgit.make_private(repo, repo / ".git")
    return repo, sha


def sh(cmd: str, cwd: Path) -> None:
    subprocess.run(["sh", "-c", cmd], cwd=cwd, check=True, capture_output=True)


def diff_of(repo: Path, sha: str, tmp: Path) -> tuple[str, trialgit.DiffRecord]:
    out = tmp / "out" / "workspace.diff"
    record = trialgit.write_diff(repo, sha, out)
    return out.read_bytes().decode("utf-8", "replace"), record


def test_private_dir_is_outside_the_workspace(ws: tuple[Path, str]) -> None:
    repo, _ = ws
    private = trialgit.private_dir(repo)
    assert private.parent == repo.parent and (private / "git" / "HEAD").is_file()
    assert oct(private.stat().st_mode & 0o777) == "0o700"
    assert not private.is_relative_to(repo)


@pytest.mark.parametrize(
    "config",
    [
        "core.fsmonitor 'touch {m}; echo'",
        "diff.external 'touch {m}'",
        "filter.x.clean 'touch {m}; cat'",
        "diff.x.textconv 'touch {m}; cat'",
        "core.pager 'touch {m}; cat'",
        "include.path {inc}",
    ],
)
def test_agent_git_config_never_runs_on_the_host(
    ws: tuple[Path, str], tmp_path: Path, config: str
) -> None:
    repo, sha = ws
    marker = tmp_path / "marker"
    inc = tmp_path / "included"
    inc.write_text(f"[core]\n\tfsmonitor = touch {marker}; echo\n")
    sh(f"git config {config.format(m=marker, inc=inc)}", repo)
    sh("echo '* filter=x diff=x' > .gitattributes && echo 'fixed = 1' >> calc.py", repo)
    text, record = diff_of(repo, sha, tmp_path)
    changed = trialgit.changed(trialgit.git_dir(repo), repo, sha)
    assert not marker.exists()
    assert record.status == "ok" and "+fixed = 1" in text  # diff.external did not empty it
    assert changed == [".gitattributes", "calc.py"]


def test_link_at_the_old_index_and_exclude_paths_is_not_followed(
    ws: tuple[Path, str], tmp_path: Path
) -> None:
    repo, sha = ws
    victim = tmp_path / "victim"
    victim.write_text("host file\n")
    (repo / ".git" / "harness-diff-index").symlink_to(tmp_path / "created-by-host")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(victim)
    diff_of(repo, sha, tmp_path)
    gab.write_run_start(repo, {"run_id": "r"}, "/workspace")
    gab.write_run_progress(repo, {"run_id": "r"})
    assert not (tmp_path / "created-by-host").exists()
    assert victim.read_text() == "host file\n"


def test_core_worktree_does_not_put_a_host_folder_in_the_diff(
    ws: tuple[Path, str], tmp_path: Path
) -> None:
    repo, sha = ws
    host = tmp_path / "hostdir"
    host.mkdir()
    (host / "secret.txt").write_text("HOST-SECRET\n")
    sh(f"git config core.worktree {host}", repo)
    text, record = diff_of(repo, sha, tmp_path)
    assert record.status == "ok" and "HOST-SECRET" not in text


def test_replace_ref_does_not_hide_a_protected_change(ws: tuple[Path, str], tmp_path: Path) -> None:
    repo, sha = ws
    sh("echo 'assert True' > tests/test_calc.py", repo)
    sh("git -c user.name=a -c user.email=a@a commit -qam hide", repo)
    sh(f"git replace {sha} HEAD", repo)
    changed = trialgit.changed(trialgit.git_dir(repo), repo, sha)
    assert "tests/test_calc.py" in changed
    text, _ = diff_of(repo, sha, tmp_path)
    assert "+assert True" in text


def test_git_dir_as_file_alternates_and_forged_state(ws: tuple[Path, str], tmp_path: Path) -> None:
    repo, sha = ws
    (tmp_path / "other").mkdir()
    subprocess.run(["git", "init", "-q", str(tmp_path / "other")], check=True)
    alt = repo / ".git" / "objects" / "info" / "alternates"
    alt.parent.mkdir(parents=True, exist_ok=True)
    alt.write_text(str(tmp_path / "other" / ".git" / "objects") + "\n")
    state = repo / ".git" / "harness" / "state.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"baseline": "0" * 40}))
    os.rename(repo / ".git", tmp_path / "moved.git")
    (repo / ".git").write_text(f"gitdir: {tmp_path / 'moved.git'}\n")
    sh("echo 'x = 2' >> calc.py", repo)
    text, record = diff_of(repo, sha, tmp_path)
    assert record.status == "ok" and "+x = 2" in text and "gitdir" not in text


def test_symlinked_gitattributes_and_self_hiding_gitignore(
    ws: tuple[Path, str], tmp_path: Path
) -> None:
    repo, sha = ws
    attrs = tmp_path / "attrs"
    attrs.write_text("* filter=x\n")
    (repo / ".gitattributes").symlink_to(attrs)
    (repo / ".gitignore").write_text("build/\n.gitignore\nconftest.py\n")
    (repo / "conftest.py").write_text("# forged\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("ignored by the baseline\n")
    changed = trialgit.changed(trialgit.git_dir(repo), repo, sha)
    assert {"conftest.py", ".gitignore", ".gitattributes"} <= set(changed)
    assert "build/out.o" not in changed  # the baseline's own ignore rules still hold


def plant_odd_files(repo: Path) -> socket.socket:
    os.mkfifo(repo / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(repo / "sock"))
    (repo / os.fsdecode(b"bad\xffname.py")).write_text("x = 1\n")
    (repo / "dangling").symlink_to("missing.txt")  # inside the tree, dangling
    (repo / "shadow").symlink_to("/etc/shadow")
    (repo / "inside").symlink_to("calc.py")
    with (repo / "sparse.bin").open("wb") as fh:
        fh.truncate(200 * 1024**2)  # under the holes cap: copied, kept sparse
    return sock


def test_special_files_odd_names_and_sparse_files_are_data(
    ws: tuple[Path, str], tmp_path: Path
) -> None:
    repo, sha = ws
    sock = plant_odd_files(repo)
    try:
        _, record = diff_of(repo, sha, tmp_path)
        changed = trialgit.changed(trialgit.git_dir(repo), repo, sha)
        tree = tmp_path / "verify" / "tree"
        skipped = stage_tree(repo, tree, max_bytes=4 * 1024**3)
    finally:
        sock.close()
    assert record.status == "ok" and "sparse.bin" in record.skipped
    assert "bad\\xffname.py" in changed and "sparse.bin" in changed
    assert {"pipe", "sock", "shadow"} <= set(skipped) and "dangling" in os.listdir(tree)
    assert os.readlink(tree / "inside") == "calc.py" and not (tree / "shadow").exists()
    assert (tree / ".git" / "info" / "attributes").is_file()  # harness's git, not the agent's
    assert (tree / "sparse.bin").stat().st_size == 200 * 1024**2
    assert (tree / "sparse.bin").stat().st_blocks * 512 < 1024**2


def test_apparent_size_and_file_count_caps(ws: tuple[Path, str], tmp_path: Path) -> None:
    repo, _ = ws
    with (repo / "sparse.bin").open("wb") as fh:
        fh.truncate(2 * 1024**3)
    assert os.stat(repo / "sparse.bin").st_blocks * 512 < 1024**2
    with pytest.raises(OverCap, match="apparent size"):
        stage_tree(repo, tmp_path / "t1", max_bytes=64 * 1024**2)
    assert not (tmp_path / "t1").exists()  # refused before anything was copied
    with pytest.raises(OverCap, match="MiB of holes"):  # under the 4g cap, still refused:
        stage_tree(repo, tmp_path / "t2", max_bytes=4 * 1024**3)  # a tar writes holes
    assert not (tmp_path / "t2").exists()


def test_diff_size_cap_is_recorded(
    ws: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, sha = ws
    monkeypatch.setattr(trialgit, "MAX_DIFF_BYTES", 4096)
    (repo / "big.txt").write_text("line\n" * 10000)
    _, record = diff_of(repo, sha, tmp_path)
    assert record.status == "truncated" and record.bytes == 4096


def test_a_diff_that_cannot_be_computed_says_so(ws: tuple[Path, str], tmp_path: Path) -> None:
    repo, _ = ws
    text, record = diff_of(repo, "f" * 40, tmp_path)
    assert record.status == "failed" and text.startswith("# workspace.diff could not")


def test_evidence_links_out_are_neither_followed_nor_kept(tmp_path: Path) -> None:
    ev = tmp_path / "evidence"
    ev.mkdir()
    (ev / "ok.json").write_text("{}")
    (ev / "shadow").symlink_to("/etc/shadow")
    (ev / "up").symlink_to("../../")
    os.mkfifo(ev / "pipe")
    copied = copy_tree(ev, tmp_path / "dest")
    assert sorted(os.listdir(tmp_path / "dest")) == ["ok.json"]
    assert set(copied.skipped) == {"shadow", "up", "pipe"}
    removed = scrub_tree(ev)
    assert sorted(os.listdir(ev)) == ["ok.json"] and set(removed) == {"shadow", "up", "pipe"}


def test_tar_copy_out_skips_links_leaving_the_destination(tmp_path: Path) -> None:
    archive = tmp_path / "a.tar"
    with tarfile.open(archive, "w") as tar:
        link = tarfile.TarInfo("out/shadow")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(link)
        fifo = tarfile.TarInfo("out/pipe")
        fifo.type = tarfile.FIFOTYPE
        tar.addfile(fifo)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "x", filter=data_filter)
    assert not os.path.lexists(tmp_path / "x" / "out" / "shadow")
    assert not os.path.lexists(tmp_path / "x" / "out" / "pipe")


def test_run_start_names_the_workspace_as_the_agent_sees_it(ws: tuple[Path, str]) -> None:
    repo, _ = ws
    gab.write_run_start(repo, {"run_id": "r", "scenario": "s"}, "/workspace")
    start = json.loads((repo / ".run-start.json").read_text())
    assert start["workspace"] == "/workspace" and str(repo) not in json.dumps(start)


def test_paths_git_cannot_see_are_still_changes(ws: tuple[Path, str]) -> None:
    repo, sha = ws
    for rel in (".git.", "GIT~1", "x/.GIT/conftest.py", "sub/.git/HEAD"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("x\n")
    changed = set(trialgit.changed(trialgit.git_dir(repo), repo, sha))
    assert {".git.", "GIT~1", "x/.GIT/", "sub/.git/"} <= changed


def test_state_and_progress_are_never_written_through_links(
    ws: tuple[Path, str], tmp_path: Path
) -> None:
    from harness.trial.workspace import WorkspaceState, write_state

    repo, sha = ws
    host = tmp_path / "hostdir"
    host.mkdir()
    (repo / ".git" / "harness").symlink_to(host)
    (repo / ".run-progress.json").mkdir()
    state = WorkspaceState("s", "x", "0" * 16, sha, sha, None, "0", "now")
    write_state(repo, state)
    gab.write_run_progress(repo, {"run_id": "r"})
    assert os.listdir(host) == []
    assert json.loads((trialgit.private_dir(repo) / "state.json").read_text())["baseline"] == sha
    assert json.loads((repo / ".run-progress.json").read_text()) == {"run_id": "r"}


def test_a_forged_workspace_state_is_not_believed(ws: tuple[Path, str]) -> None:
    from types import SimpleNamespace

    from harness.trial.workspace import WorkspaceState, read_state, write_state

    repo, sha = ws
    write_state(repo, WorkspaceState("s", "x", "0" * 16, sha, sha, None, "0", "now"))
    forged = repo / ".git" / "harness" / "state.json"
    forged.write_text(forged.read_text().replace(sha, "f" * 40))
    loaded = SimpleNamespace(name="s")
    assert read_state(repo, loaded).baseline == sha  # type: ignore[arg-type]
