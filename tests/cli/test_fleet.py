"""``harness fleet status`` / ``bench`` through typer, against test hosts."""

import json

import pytest
import yaml
from typer.testing import CliRunner

from harness.cli.fleet import fleet_app
from harness.fleet.config import parse_fleet
from harness.fleet.probe import fleet_fingerprint
from harness.gateway import GatewayServer
from harness.testing.lmstudio import TestHost
from harness.util.serving import bind_socket
from tests.support.fleet_file import write_fleet

pytestmark = pytest.mark.integration


@pytest.fixture
def hosts():
    with (
        TestHost(models=["org/m"], quant="Q4_K_M", prefill=4000, decode=400) as a,
        TestHost(models=["org/m"], quant="Q8_0", prefill=2000, decode=200, parallel=2) as b,
    ):
        yield a, b


def test_status_warns_about_heterogeneous_artefacts(hosts, tmp_path):
    a, b = hosts
    path = write_fleet(tmp_path, a.url, b.url)
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "Q4_K_M" in res.output and "Q8_0" in res.output
    assert "WARNING" in res.output and "different artefacts" in res.output
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(path), "--json"])
    fp = json.loads(res.output)
    assert fp["heterogeneous"] is True
    ident = fp["identifiers"]["org/m"]
    assert ident["differs"] == ["quantization"]
    assert ident["hosts"]["b"]["parallel"] == 2


def test_fingerprint_is_json_and_stable(hosts, tmp_path):
    a, b = hosts
    cfg = parse_fleet(yaml.safe_load(write_fleet(tmp_path, a.url, b.url).read_text()))
    fp = fleet_fingerprint(cfg)
    assert json.loads(json.dumps(fp)) == fp
    assert fleet_fingerprint(cfg)["digest"] == fp["digest"]
    with GatewayServer(cfg, require_keys=False) as gw:  # what the trial stores in run.json
        assert gw.fingerprint()["digest"] == fp["digest"]
        assert gw.hosts()["b"]["slots"] == 2  # learned from the probe


def test_status_with_an_unreachable_host(hosts, tmp_path):
    sock = bind_socket("127.0.0.1", 0)
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    path = write_fleet(tmp_path, hosts[0].url, dead)
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(path), "--json"])
    assert res.exit_code == 3  # any configured host down is an infrastructure problem
    fp = json.loads(res.output[: res.output.rindex("}") + 1])
    assert fp["hosts"]["b"]["reachable"] is False
    assert any(w.startswith("host b is down") for w in fp["warnings"])
    # the table run says so on a line of its own
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 3
    lines = [x for x in res.output.splitlines() if "host b is down" in x]
    assert lines and lines[0].startswith("WARNING")
    assert "fleet host(s) down: b" in res.output
    only_dead = write_fleet(tmp_path, dead)
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(only_dead)])
    assert res.exit_code == 3 and "no fleet host is reachable" in res.output


def test_bench_measures_and_seeds_the_router(hosts, tmp_path):
    a, b = hosts
    path = write_fleet(tmp_path, a.url, b.url)
    res = CliRunner().invoke(fleet_app, ["bench", "--fleet", str(path), "--max-tokens", "32"])
    assert res.exit_code == 0, res.output
    stored = json.loads((tmp_path / ".harness" / "fleet-bench.json").read_text())["hosts"]
    # the fake hosts' configured speeds, within measurement noise (slow enough that a
    # busy machine's scheduling delays stay small beside the simulated prefill and decode)
    assert stored["a"]["prefill_tps"] == pytest.approx(4000, rel=0.5)
    assert stored["b"]["prefill_tps"] == pytest.approx(2000, rel=0.5)
    assert stored["a"]["prefill_tps"] > stored["b"]["prefill_tps"]
    assert stored["b"]["decode_tps"] == pytest.approx(200, rel=0.5)
    from harness.fleet.config import load_fleet

    with GatewayServer(load_fleet(path), require_keys=False) as gw:
        assert gw.hosts()["a"]["prefill_tps"] == pytest.approx(stored["a"]["prefill_tps"], 0.01)


def test_missing_fleet_file_is_a_user_error(tmp_path):
    res = CliRunner().invoke(fleet_app, ["status", "--fleet", str(tmp_path / "nope.yml")])
    assert res.exit_code == 2 and "fleet file not found" in res.output


def test_bench_shows_failed_runs(tmp_path):
    from harness.testing.lmstudio import Faults

    with (
        TestHost(models=["org/m"], prefill=40000, decode=4000) as a,
        TestHost(models=["org/m"], prefill=40000, decode=4000, faults=Faults(error_rate=1.0)) as b,
    ):
        path = write_fleet(tmp_path, a.url, b.url)
        out = tmp_path / "bench.json"
        res = CliRunner().invoke(
            fleet_app,
            ["bench", "--fleet", str(path), "--runs", "3", "--max-tokens", "8", "--out", str(out)],
            env={"COLUMNS": "200"},
        )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())["hosts"]
    assert data["a"]["runs"] == 3 and data["a"]["failed_runs"] == 0
    assert data["b"]["runs"] == 0 and data["b"]["failed_runs"] == 3
    assert "host b: 3 of 3 run(s) failed" in res.output
