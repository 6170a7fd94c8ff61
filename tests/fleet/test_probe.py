"""Fleet probes: the fingerprint compares only what hosts report; its digest holds while
a host is down."""

import pytest
import yaml

from harness.fleet.config import parse_fleet
from harness.fleet.probe import fleet_fingerprint
from harness.testing.lmstudio import TestHost
from tests.support.fleet_file import write_fleet


@pytest.mark.unit
def test_fingerprint_compares_only_what_hosts_report():
    from harness.fleet.probe import HostStatus, ModelInfo, fingerprint

    cfg = parse_fleet(
        {
            "hosts": [{"name": n, "base_url": f"http://{n}:1"} for n in ("a", "b", "c")],
            "models": {"m": {"upstream": "org/m"}},
        }
    )
    st = {
        "a": HostStatus(
            "a",
            "http://a:1",
            True,
            "lmstudio-v1",
            models={"org/m": ModelInfo("org/m", True, "Q4_K_M", "gguf", context_length=8192)},
        ),
        "b": HostStatus(
            "b",
            "http://b:1",
            True,
            "lmstudio-v0",
            models={"org/m": ModelInfo("org/m", True, "Q4_K_M", "gguf")},
        ),
        "c": HostStatus(
            "c", "http://c:1", True, "openai", models={"org/m": ModelInfo("org/m", True)}
        ),
    }
    fp = fingerprint(cfg, st)
    assert fp["heterogeneous"] is False
    assert fp["warnings"] == [
        "host c reports no artefact for 'org/m' (plain OpenAI API): "
        "it cannot be checked to be the same model"
    ]
    st["b"].models["org/m"].format = "mlx"
    fp2 = fingerprint(cfg, st)
    assert fp2["identifiers"]["org/m"]["differs"] == ["format"]
    assert fp2["digest"] != fp["digest"]


@pytest.mark.integration
def test_fingerprint_digest_is_stable_while_a_host_is_down(tmp_path):
    with (
        TestHost(models=["org/m"], prefill=40000, decode=4000) as a,
        TestHost(models=["org/m"], prefill=40000, decode=4000) as b,
    ):
        cfg = parse_fleet(yaml.safe_load(write_fleet(tmp_path, a.url, b.url).read_text()))
        both = fleet_fingerprint(cfg)
        b.stop()
        one_down = fleet_fingerprint(cfg, timeout=2)
    assert one_down["hosts"]["b"]["reachable"] is False
    assert one_down["digest"] == both["digest"]
