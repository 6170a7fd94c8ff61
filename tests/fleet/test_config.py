"""fleet.yml: loading, validation errors that name file and field, model resolution."""

from pathlib import Path

import pytest
import yaml

from harness.errors import UserError
from harness.fleet.config import load_fleet, parse_fleet

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


def fleet(**over):
    data = {
        "hosts": [
            {"name": "a", "base_url": "http://h1:1234"},
            {"name": "b", "base_url": "http://h2:1234/v1/"},
        ],
        "models": {"m": {"upstream": "org/m", "aliases": ["gpt-4o"]}},
    }
    data.update(over)
    return data


def test_example_file_loads():
    cfg = parse_fleet(yaml.safe_load((ROOT / "fleet.yml.example").read_text()), "example")
    assert cfg.hosts and cfg.models
    assert cfg.routing.strategy == "earliest_finish"


def test_base_url_normalised_and_upstream_per_host():
    cfg = parse_fleet(fleet(models={"m": {"upstream": {"b": "m@q8"}}}))
    assert cfg.host("b").base_url == "http://h2:1234"
    assert cfg.models["m"].host_names(["a", "b"]) == ["b"]
    assert cfg.models["m"].upstream_for("b") == "m@q8"


@pytest.mark.parametrize(
    ("over", "field", "words"),
    [
        ({"models": {"m": {"upstream": "x", "hosts": ["nope"]}}}, "", "unknown host 'nope'"),
        (
            {
                "hosts": [
                    {"name": "a", "base_url": "http://x"},
                    {"name": "a", "base_url": "http://y"},
                ]
            },
            "",
            "duplicate host",
        ),
        ({"hosts": [{"name": "a", "base_url": "ftp://x"}]}, "hosts.0.base_url", "http://"),
        ({"hosts": [{"name": "a", "base_url": "http://x", "watts": -1}]}, "hosts.0.watts", ""),
        ({"routing": {"strategy": "random"}}, "routing.strategy", ""),
        ({"prices": {"m": {"input": 1}}}, "prices.m.output", "required"),
        ({"agent_aliases": {"aider": {"gpt-4": "ghost"}}}, "", "unknown model 'ghost'"),
        ({"surprise": 1}, "surprise", "not permitted"),
    ],
)
def test_errors_name_the_field(over, field, words):
    with pytest.raises(UserError) as err:
        parse_fleet(fleet(**over), "fleet.yml")
    line = err.value.one_line()
    assert line.startswith("fleet.yml: ")
    assert field in line and words in line
    assert "\n" not in line


def test_missing_file_and_bad_yaml(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_FLEET", str(tmp_path / "absent.yml"))
    with pytest.raises(UserError, match="fleet file not found"):
        load_fleet()
    bad = tmp_path / "fleet.yml"
    bad.write_text("hosts: [\n")
    with pytest.raises(UserError, match="not valid YAML"):
        load_fleet(bad)


def test_resolve_model_order():
    cfg = parse_fleet(
        fleet(
            models={"m": {"upstream": "org/m", "aliases": ["gpt-4o"]}, "n": {"upstream": "org/n"}},
            agent_aliases={"aider": {"gpt-4o": "n"}},
        )
    )
    assert cfg.resolve_model("m", None, None) == "m"
    assert cfg.resolve_model("gpt-4o", None, None) == "m"
    assert cfg.resolve_model("gpt-4o", "aider", None) == "n"  # per-agent wins
    assert cfg.resolve_model("claude-x", None, "n") == "n"  # the key's model catches the rest
    assert cfg.resolve_model("claude-x", None, None) is None


def test_bench_path_beside_fleet_file(tmp_path):
    p = tmp_path / "fleet.yml"
    p.write_text(yaml.safe_dump(fleet()))
    assert load_fleet(p).bench_path() == tmp_path / ".harness" / "fleet-bench.json"
