"""The gateway as a per-trial container on the agent's internal network.

The agent container can reach this container and nothing else. When a fleet is used,
the gateway container is also attached to Docker's default bridge so it can reach the
hosts (those on this machine's loopback through ``loopback``: a relay per given port, or
the bridge address of the container publishing it); when replaying a cassette it needs no
route out at all. Telemetry, recordings
and the log are copied out when the trial's agent phase ends.

The container runs ``python -m harness.gateway.inside`` (``harness.gateway.files`` holds
what this placement shares with the local one).
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.backends.docker.loopback import Relay, reach_loopback_hosts
from harness.config.budget import Budget
from harness.config.entrants import LLMEntry
from harness.errors import InfraError, UserError
from harness.fleet.telemetry import trial_usage_from_file
from harness.gateway.files import PORT, ROOT, cassette_name, gateway_files, shared_router_url

#: how long the gateway may take to end (its own graceful shutdown: 5 s, then in-flight
#: calls are cut and written)
END_WAIT_S = 10.0


class TrialGateway:
    """Start, reach, read and remove one trial's gateway container.

    ``budget`` caps the trial's spending (calls past it get HTTP 429 ``budget_exceeded``;
    ``budget_state()`` reads ``GET /v1/harness/budget``); ``router_url`` is the job's shared
    router, reached over the default bridge (default: ``HARNESS_FLEET_ROUTER``).
    """

    def __init__(
        self,
        *,
        trial: str,
        agent: str,
        llm: LLMEntry,
        network: str,
        labels: dict[str, str],
        fleet_file: Path | None = None,
        replay: Path | None = None,
        record: bool = False,
        budget: Budget | None = None,
        router_url: str | None = None,
    ) -> None:
        if replay is None and fleet_file is None:
            raise UserError(
                f"model '{llm.name}' needs a fleet or a cassette",
                file="fleet.yml",
                field="hosts",
                fix="create fleet.yml (see fleet.yml.example) or pass --replay FILE",
            )
        self.trial, self.agent, self.llm = trial, agent, llm
        self.network, self.labels = network, labels
        self.fleet_file, self.replay, self.record = fleet_file, replay, record
        self.budget = budget
        self.router_url = router_url if router_url is not None else shared_router_url()
        self.sandbox: Any = None
        self.key = ""
        self.image_id: str | None = None
        self.relays: list[Relay] = []  # to fleet hosts on this machine's loopback

    @property
    def url(self) -> str:
        assert self.sandbox is not None
        return f"http://{self.sandbox.name}:{PORT}/v1"

    def start(self) -> None:
        from harness.images import ensure_image
        from harness.sandbox.base import SandboxSpec
        from harness.sandbox.docker import DockerSandbox
        from harness.sandbox.inject import HARNESS_PYTHONPATH, harness_source_mount

        ref = ensure_image("gateway")
        spec = SandboxSpec(
            phase="gateway",
            image=ref.tag,
            project_dir=ROOT,
            network=self.network,
            labels=self.labels,
            pids=256,
            mounts=harness_source_mount(),  # read-only: nothing is copied in for it
        )
        self.sandbox = DockerSandbox(spec)
        self.image_id = ref.id
        with tempfile.TemporaryDirectory(prefix="harness-gw-") as tmp:
            self.key = gateway_files(
                Path(tmp),
                trial=self.trial,
                agent=self.agent,
                llm=self.llm,
                fleet_file=self.fleet_file,
                replay=self.replay,
            )
            if self.replay is None:  # hosts on this machine's loopback: reachable addresses
                self.relays = reach_loopback_hosts(Path(tmp) / "fleet.yml", self.sandbox.client)
            self.sandbox.start()
            self.sandbox.copy_in(Path(tmp), ROOT)
        if self.replay is None:  # reach the fleet's hosts through the default bridge
            self.sandbox.client.networks.get("bridge").connect(self.sandbox.container_id)
            if self.relays:  # relays to loopback hosts: for this container alone
                box = self.sandbox.client.containers.get(self.sandbox.container_id)
                address = box.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
                for relay in self.relays:
                    relay.allow(address)
        pythonpath = HARNESS_PYTHONPATH
        args = [
            "python3",
            "-m",
            "harness.gateway.inside",
            "--port",
            str(PORT),
            "--fleet",
            f"{ROOT}/fleet.yml",
            "--keys",
            f"{ROOT}/keys.yml",
            "--telemetry",
            f"{ROOT}/out/telemetry.jsonl",
        ]
        if self.replay is not None:
            args += ["--replay", f"{ROOT}/{cassette_name(self.replay)}"]
        if self.record:
            args += ["--record", f"{ROOT}/out/recording.jsonl"]
        if self.budget is not None and not self.budget.unlimited:
            args += ["--budget", shlex.quote(self.budget.model_dump_json(by_alias=True))]
        if self.router_url and self.replay is None:
            args += ["--router", self.router_url]
        line = " ".join(args)
        started = self.sandbox.exec(
            [
                "sh",
                "-c",
                f"mkdir -p {ROOT}/out && PYTHONPATH={pythonpath} nohup {line} "
                f"> {ROOT}/out/gateway.log 2>&1 & echo $! > {ROOT}/gateway.pid",
            ],
            timeout=30,
        )
        if not started.ok:
            raise InfraError(f"gateway did not start: {started.stderr.strip()[-300:]}")
        self._wait_healthy()

    def _wait_healthy(self, budget: float = 60.0) -> None:
        # exit 0: healthy; 3: the gateway process has died (no point waiting); else not yet
        probe = (
            "import os,sys,urllib.request\n"
            "try:\n"
            f" urllib.request.urlopen('http://127.0.0.1:{PORT}/health', timeout=2)\n"
            "except Exception:\n"
            " try:\n"
            f"  pid = int(open('{ROOT}/gateway.pid').read())\n"
            "  state = open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[0]\n"
            " except (OSError, ValueError, IndexError):\n"
            "  sys.exit(3)\n"
            " sys.exit(3 if state in 'ZX' else 1)\n"
        )
        deadline = time.monotonic() + budget
        dead = False
        while time.monotonic() < deadline:
            res = self.sandbox.exec(["python3", "-c", probe], timeout=10)
            if res.ok:
                return
            if res.returncode == 3:
                dead = True
                break
            time.sleep(0.3)
        log = self.sandbox.exec(["sh", "-c", f"tail -n 20 {ROOT}/out/gateway.log"], timeout=10)
        tail = " | ".join(log.stdout.strip().splitlines()[-5:])[-400:]
        what = "gateway exited at start" if dead else "gateway never became healthy"
        raise InfraError(f"{what}: {tail or 'no log'}")

    def budget_state(self) -> dict[str, Any]:
        """``GET /v1/harness/budget`` with the trial's key, from inside the container."""
        probe = (
            "import urllib.request,sys;"
            f"r=urllib.request.Request('http://127.0.0.1:{PORT}/v1/harness/budget',"
            f"headers={{'Authorization':'Bearer {self.key}'}});"
            "sys.stdout.write(urllib.request.urlopen(r,timeout=5).read().decode())"
        )
        res = self.sandbox.exec(["python3", "-c", probe], timeout=15)
        if not res.ok:
            raise InfraError(f"could not read the gateway's budget: {res.stderr.strip()[-300:]}")
        return dict(json.loads(res.stdout))

    def collect(self, dest: Path) -> dict[str, Any]:
        """Copy telemetry, recording and log to ``dest``; return the trial's usage."""

        dest.mkdir(parents=True, exist_ok=True)
        self._end()
        try:
            self.sandbox.copy_out(f"{ROOT}/out", dest / "out")
        except Exception as exc:  # the container may already be gone on a hard failure
            raise InfraError(f"could not read gateway telemetry: {exc}") from exc
        out = dest / "out"
        for item in out.iterdir():
            shutil.move(str(item), dest / item.name)
        out.rmdir()
        telemetry = dest / "telemetry.jsonl"
        return trial_usage_from_file(telemetry, self.trial) if telemetry.exists() else {}

    def _end(self) -> None:
        """End the gateway process before its record is read: a call still in flight (the
        agent stopped or timed out in the middle of it) is cut by the gateway's own
        shutdown and written as such (``incomplete``), not lost with the container.
        Best effort: a gateway already gone leaves what it wrote."""
        if self.sandbox is None:
            return
        wait = (
            f"pid=$(cat {ROOT}/gateway.pid) || exit 0; kill -TERM $pid 2>/dev/null || exit 0; "
            f"for i in $(seq 1 {int(END_WAIT_S * 10)}); do "
            "kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; exit 1"
        )
        with contextlib.suppress(Exception):
            self.sandbox.exec(["sh", "-c", wait], timeout=END_WAIT_S + 10)

    def stop(self) -> None:
        if self.sandbox is not None:
            self.sandbox.stop()
        for relay in self.relays:
            relay.close()
        self.relays = []
