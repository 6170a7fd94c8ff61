"""Host-side containment as real trials (issue 22): an agent plants many attacks at once
(hostile ``.git/config`` drivers, attributes, ``core.worktree``, links at the paths the
host used to write, a replace ref and a forged state hiding a protected change, a
self-hiding ``.gitignore``, pipes, sockets, odd names, links to host files; or a sparse
file over the workspace cap) and leaves the code unfixed. Each trial, in Docker and with
``--sandbox local``, ends ``failed`` (exit 1, never ``error``), runs nothing on the host,
writes no host file, puts no host content under the results, and leaves nothing behind."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from tests.support.calc import harness, write_calc

pytestmark = [pytest.mark.integration]

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "protected.py": "VALUE = 1\n",
    ".gitignore": "build/\n",
}
AGENTS = """
  - name: shell
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:ShellAgent
"""
PLANT = r"""
set -e
B=$(git rev-parse HEAD)
echo 'VALUE = 2' > protected.py
git -c user.name=a -c user.email=a@a commit -qam hide
git replace "$B" HEAD
mkdir -p .git/harness
printf '{{"baseline": "%s"}}' "$(git rev-parse HEAD)" > .git/harness/state.json
git config core.fsmonitor "touch {m}-fsmonitor; echo"
git config diff.external "touch {m}-external"
git config filter.x.clean "touch {m}-clean; cat"
git config diff.x.textconv "touch {m}-textconv; cat"
git config core.pager "touch {m}-pager; cat"
printf '[core]\n\tfsmonitor = touch {m}-include\n' > .git/inc
git config include.path "$PWD/.git/inc"
git config core.worktree {hostdir}
printf '* filter=x diff=x\n' > .gitattributes
ln -s {victim} .git/harness-diff-index
rm -f .git/info/exclude && ln -s {victim} .git/info/exclude
printf 'build/\n.gitignore\nsneaky.py\n' > .gitignore
echo 'x = 1' > sneaky.py
mkfifo pipe
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
printf 'x = 1\n' > "$(printf 'bad\377name.py')"
ln -s missing.txt dangling
ln -s {secret} leak
ln -s {secret} .run-progress.json
"""
SPARSE = "truncate -s 2G big.bin; sleep 8"


def scenario(project: Path, tmp_path: Path, name: str, instructions: str) -> str:
    env = "{image: python, agent-timeout: 60s, memory: 512m, pids: 256}"
    env += "\nsandbox: {workspace-size: 64m}"
    write_calc(
        project,
        tmp_path / f"src-{name}",
        name=name,
        instructions=instructions,
        environment=env,
        rules="  no-modify: [protected.py]\n",
        files=FILES,
    )
    return f"t/{name}"


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


@pytest.mark.parametrize("attack", ["git-and-files", "sparse"])
@pytest.mark.parametrize("sandbox", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_planted_attacks_end_failed_and_touch_nothing_on_the_host(
    project: Path, tmp_path: Path, sandbox: str, attack: str
) -> None:
    if sandbox == "docker":
        from tests._docker import client_or_skip

        client = client_or_skip()
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENTS)
    host = tmp_path / "host"
    (host / "dir").mkdir(parents=True)
    token = secrets.token_hex(12)
    secret = host / "secret.txt"
    secret.write_text(f"HOST-SECRET-{token}\n")
    (host / "dir" / "hostfile.txt").write_text(f"HOST-DIR-{token}\n")
    victim = host / "victim"
    victim.write_text("untouched\n")
    marker = host / "marker"
    before = sorted(os.listdir(host))
    script = (
        PLANT.format(m=marker, victim=victim, hostdir=host / "dir", secret=secret)
        if attack == "git-and-files"
        else SPARSE
    )
    name = scenario(project, tmp_path, attack.replace("-", ""), script)
    res = harness(project, "exec", name, "--agent", "shell", "--sandbox", sandbox)
    assert res.returncode == 1, res.stdout + res.stderr  # failed: never error (3)
    (run,) = sorted((project / "results" / name).iterdir())
    report = json.loads((run / "verify" / "report.json").read_text())
    assert report["outcome"] == "failed"
    assert sorted(os.listdir(host)) == before  # no marker, nothing created
    assert victim.read_text() == "untouched\n"
    for path in files_under(run):
        data = path.read_bytes()
        assert token.encode() not in data, path  # no host content under the results
    ws = project / "workspace" / name
    assert not (ws / ".git" / "harness" / "run.json").exists()
    start = (ws / ".run-start.json").read_text()
    assert str(project / "results") not in start
    if sandbox == "docker":
        assert json.loads(start)["workspace"] == "/workspace"
        query = {"label": [f"harness.trial={run.name}"]}
        assert client.containers.list(all=True, filters=query) == []
        assert client.networks.list(filters=query) == []
        assert client.volumes.list(filters=query) == []
    if attack == "git-and-files":
        assert {"protected.py", "sneaky.py", ".gitignore"} <= set(report["changed_files"])
        rule = next(r for r in report["rules"] if "protected.py" in json.dumps(r))
        assert not rule["ok"]
        assert report["workspace_diff"]["status"] == "ok"
        diff = (run / "workspace.diff").read_text(errors="replace")
        assert "+VALUE = 2" in diff and "sneaky.py" in diff
    else:  # stopped by the workspace watch, or refused by the verifier's apparent-size cap
        text = (run / "verify" / "report.txt").read_text()
        assert report.get("reason") == "limit: disk" or "over its 64 MiB cap" in text
