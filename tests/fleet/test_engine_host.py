"""The built-in engine host: llama.cpp's server in the engine image on the built-in model,
reachable from here and from containers on the default bridge, fingerprinted from the
engine itself, and gone after ``stop``."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from harness.errors import InfraError
from harness.fleet.engine_host import ENGINE_LABEL, start_engine
from harness.fleet.engine_model import SMOLLM2, GgufFile
from tests._docker import base_tag, client_or_skip, leftovers, new_trial
from tests.support.engine import ALIAS, engine

pytestmark = [pytest.mark.integration, pytest.mark.docker, pytest.mark.engine]


def test_the_engine_serves_the_model_and_leaves_nothing_behind() -> None:
    client = client_or_skip()
    trial = new_trial()
    with engine(parallel=2) as host:
        models = httpx.get(f"{host.url}/v1/models", timeout=10).json()
        assert ALIAS in [m["id"] for m in models["data"]]
        assert host.build.startswith("b") and "Debian" in host.build  # from /props
        fp = host.fingerprint()
        assert fp["sha256"] == SMOLLM2.sha256 and fp["quantization"] == "Q4_1"
        assert fp["engine"] == "llama.cpp" and fp["parallel"] == 2 and fp["build"] == host.build
        assert host.host_entry(from_containers=True)["base_url"] == host.bridge_url
        # a container on the default bridge reaches it at bridge_url
        box = client.containers.run(
            base_tag(client),
            ["curl", "-sf", "-m", "10", f"{host.bridge_url}/health"],
            detach=True,
            network="bridge",
            labels={"harness": "1", "harness.trial": trial},
        )
        try:  # (run with remove=True may lose a quick container's output)
            box.wait(timeout=60)
            assert b"ok" in box.logs(stdout=True, stderr=False)
        finally:
            box.remove(force=True)
        the_id = host.container_id
    assert not client.containers.list(all=True, filters={"id": the_id})
    assert not [c for c in client.containers.list(all=True, filters={"label": ENGINE_LABEL})
                if c.id == the_id]  # fmt: skip


def test_an_engine_that_cannot_load_its_model_is_an_infra_error(tmp_path: Path) -> None:
    client = client_or_skip()
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 100)
    trial = new_trial()
    with pytest.raises(InfraError, match="engine exited"):
        bad_model = GgufFile(bad, "0" * 64, "unknown")
        start_engine(bad_model, "broken", timeout=60, labels={"harness.trial": trial})
    assert leftovers(client, trial) == []


def test_sandbox_cleanup_finds_and_removes_an_engine_left_behind() -> None:
    from harness.fleet.engine_model import ensure_builtin_model
    from harness.sandbox.cleanup import cleanup, find_leftovers

    client = client_or_skip()
    trial = new_trial()
    host = start_engine(ensure_builtin_model(), ALIAS, labels={"harness.trial": trial})
    try:
        found = find_leftovers(trial=trial, client=client)  # this project's, this maker's
        assert [f.kind for f in found] == ["container"]
        assert cleanup(trial=trial, client=client)["containers"] == 1
        assert leftovers(client, trial) == []
    finally:
        host.stop()
