"""Whole trials under attack: a bomb ends its trial as `failed` with a reason while the
job goes on; a hostile agent reaches nothing but its gateway; the relaxed items and the
policy are recorded; nothing labelled with the trial survives (volumes included)."""

from __future__ import annotations

import base64
import ipaddress
import json
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.support.calc import harness, write_calc

docker = pytest.importorskip("docker")
pytestmark = [pytest.mark.docker, pytest.mark.integration]

AGENTS = """
  - name: shell
    version: "1.0"
    supports-llms: [none]
    adapter: tests.support.agents:ShellAgent
  - name: toolcall
    version: "1.0"
    supports-llms: [replay-test]
    adapter: tests.support.agents:ToolCallAgent
"""
LLM = """
  - name: replay-test
    model: replay-model-1
"""
CONNECT = """
import socket, sys, time
for _ in range(50):
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1).close()
        break
    except OSError:
        time.sleep(0.2)
else:
    sys.exit(1)
"""
HOSTILE = REPO_ROOT / "tests" / "support" / "hostile.py"


def scenario(project: Path, tmp_path: Path, name: str, instructions: str, extra: str) -> str:
    env = "{image: python, agent-timeout: 60s, memory: 256m, pids: 128}"
    write_calc(
        project,
        tmp_path / f"src-{name}",
        name=name,
        instructions=instructions,
        environment=env,
        extra=extra,
    )
    return f"t/{name}"


@pytest.fixture
def registry(project: Path) -> Path:
    with (project / "agents.yml").open("a") as fh:
        fh.write(AGENTS)
    with (project / "llms.yml").open("a") as fh:
        fh.write(LLM)
    return project


def runs(project: Path, name: str) -> list[Path]:
    return sorted((project / "results" / "t" / name).iterdir())


def left_behind(client, trial: str) -> list[str]:  # type: ignore[no-untyped-def]
    query = {"label": [f"harness.trial={trial}"]}
    return (
        [c.name for c in client.containers.list(all=True, filters=query)]
        + [n.name for n in client.networks.list(filters=query)]
        + [v.name for v in client.volumes.list(filters=query)]
    )


def test_bombs_end_their_trials_and_the_job_goes_on(client, registry: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    small = "sandbox: {workspace-size: 24m, tmp-size: 16m, output-limit: 64k"
    scenario(
        registry,
        tmp_path,
        "disk",
        "while true; do head -c 1048576 /dev/zero >> fill; sleep 0.02; done",
        small + ", read-only-root: false, capabilities: [NET_RAW]}\n",
    )
    scenario(registry, tmp_path, "forks", "f(){ f | f & }; f; sleep 60", small + "}\n")
    scenario(registry, tmp_path, "fine", "sed -i 's/a - b/a + b/' calc.py", small + "}\n")
    res = harness(
        registry,
        "run",
        "--agents",
        "shell",
        "--scenarios",
        "t/disk,t/forks,t/fine",
        "--concurrency",
        "2",
        "--job",
        "bombs",
    )
    assert res.returncode == 0, res.stdout + res.stderr
    reports = {}
    for name in ("disk", "forks", "fine"):
        (run,) = runs(registry, name)
        reports[name] = json.loads((run / "verify" / "report.json").read_text())
        assert left_behind(client, run.name) == [], name
    assert reports["disk"]["outcome"] == "failed"
    assert reports["disk"]["reason"] == "limit: disk"
    assert reports["forks"]["outcome"] == "failed"
    assert reports["forks"]["reason"] == "limit: pids"
    assert reports["fine"]["outcome"] == "success" and "reason" not in reports["fine"]
    policy = reports["disk"]["sandbox_policy"]
    assert policy["relaxed"] == ["read-only-root", "non-root", "cap:NET_RAW"]
    assert reports["fine"]["sandbox_policy"]["relaxed"] == []
    (disk_run,) = runs(registry, "disk")
    meta = json.loads((disk_run / "run.json").read_text())
    assert meta["sandbox_policy"]["workspace-size"] == "24m"
    phases = json.loads((disk_run / "progress.json").read_text())["phases"]
    agent = next(p for p in phases if p["name"] == "agent")
    assert agent["outcome"] == "limit" and agent["detail"].startswith("limit: disk")


@pytest.fixture
def listeners(client) -> Iterator[dict[str, list[object]]]:  # type: ignore[no-untyped-def]
    """Things a trial must not reach: a host listener and another trial's container."""
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    port = server.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.5)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    from harness.images import ensure_image
    from harness.sandbox.base import SandboxSpec
    from harness.sandbox.docker import DockerSandbox

    other = DockerSandbox(
        SandboxSpec(
            phase="agent",
            image=ensure_image("base").tag,
            network="internal",
            labels={"harness.trial": "test-other-trial"},
        )
    )
    other.start()
    try:
        other.exec(["sh", "-c", "nohup python3 -m http.server 8080 >/dev/null 2>&1 &"], timeout=10)
        ip = next(
            iter(
                other.client.containers.get(other.container_id)
                .attrs["NetworkSettings"]["Networks"]
                .values()
            )
        )["IPAddress"]
        ipam = other.client.networks.get("bridge").attrs["IPAM"]["Config"][0]
        bridge = ipam.get("Gateway") or str(ipaddress.ip_network(ipam["Subnet"])[1])
        host_ips = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout
        forbidden: dict[str, list[object]] = {
            "other_trial": [ip, 8080],
            "host_bridge": [bridge, port],
            "host_loopback": ["127.0.0.1", port],
        }
        up = other.exec(  # controls: both listeners do answer where they may be reached
            ["python3", "-c", CONNECT, "127.0.0.1", "8080"], timeout=20
        )
        assert up.ok, up
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        for i, addr in enumerate(host_ips.split()[:2]):
            if ":" not in addr:
                forbidden[f"host_ip{i}"] = [addr, port]
        yield forbidden
    finally:
        other.stop()
        stop.set()
        server.close()


def test_hostile_agent_reaches_nothing_but_its_gateway(
    client, registry: Path, tmp_path: Path, listeners: dict[str, list[object]]
) -> None:  # type: ignore[no-untyped-def]
    name = scenario(registry, tmp_path, "hostile", "fix add", "")
    code = base64.b64encode(HOSTILE.read_bytes()).decode()
    targets = json.dumps({"forbidden": listeners})
    command = (
        f"echo {code} | base64 -d > /tmp/h.py && "
        f"python3 /tmp/h.py '{targets}' \"$(echo $GW | sed 's#http://##; s#/v1##')\""
    )
    tape = tmp_path / "hostile.jsonl"
    tape.write_text(
        json.dumps(
            {
                "request": {"model": "replay-model-1"},
                "response": {
                    "tool_calls": [{"name": "bash", "arguments": {"command": command}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            }
        )
        + "\n"
    )
    res = harness(
        registry,
        "exec",
        "--agent",
        "toolcall",
        "--model",
        "replay-test",
        "--replay",
        str(tape),
        name,
    )
    (run,) = runs(registry, "hostile")
    out = (run / "agent" / "stdout.txt").read_text()
    line = next((ln for ln in out.splitlines() if ln.startswith("HOSTILE ")), None)
    assert line is not None, out + res.stdout + res.stderr
    reached = json.loads(line[len("HOSTILE ") :])
    assert reached.pop("gateway") is True  # the control: the one address it may reach
    assert {k: v for k, v in reached.items() if v} == {}, reached
    assert set(reached) >= {f"net:{k}" for k in listeners}
    assert left_behind(client, run.name) == []
