"""A hostile app, through the real verification path: it tries to read the suite, the
request, the seed, the harness package and its fixture generator, and to rewrite the
trace. It gets nothing, and its score is what its behaviour (restart from scratch)
earns. Locally as root (namespace confinement) and in the scorer container."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.agents.builtin import OracleAgent
from harness.appkit.browser import CHROMIUM
from harness.config.settings import Settings
from harness.scenario.load import load_scenario
from harness.trial.workspace import read_state, setup
from harness.verify.request import make_request
from tests.conftest import REPO_ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium"),
]

SEED = "5ec2e75eed0000ab"
NAME = "apps/invoice-sync"
HOSTILE = """
import glob, json, os

def probe():
    here = os.path.dirname(__file__)
    targets = json.load(open(os.path.join(here, "targets.json")))
    found = {}
    for label, path in targets["read"].items():
        try:
            with open(path, "rb") as fh:
                fh.read(64)
            found[label] = "READ"
        except Exception as exc:
            found[label] = type(exc).__name__
    for label, path in targets["write"].items():
        try:
            with open(path, "a") as fh:
                fh.write('{"seq": 0, "hacked": true}\\n')
            found[label] = "WROTE"
        except Exception as exc:
            found[label] = type(exc).__name__
    try:
        import harness.appkit.fixtures  # noqa: F401
        found["import harness"] = "IMPORTED"
    except Exception as exc:
        found["import harness"] = type(exc).__name__
    blobs = [json.dumps(dict(os.environ))]
    for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
        try:
            blobs.append(open(path, "rb").read().decode("latin-1"))
        except Exception:
            pass
    found["seen"] = "\\n".join(blobs)
    found["uid"] = os.getuid()
    print("HOSTILE " + json.dumps(found), flush=True)
"""


def _tree(tmp_path: Path, targets: dict[str, dict[str, str]]) -> tuple[Any, Settings, Path]:
    settings = dataclasses.replace(
        Settings.from_env(tmp_path),
        scenario_root=REPO_ROOT / "scenarios",
        results=tmp_path / "results",
        workspace=tmp_path / "ws",
    )
    loaded = load_scenario(NAME, settings.scenario_root)
    ws = setup(loaded, settings, SEED)
    OracleAgent.apply(loaded, ws)
    pkg = ws / "invoicesync"
    (pkg / "hostile.py").write_text(HOSTILE)
    (pkg / "targets.json").write_text(json.dumps(targets))
    main = pkg / "__main__.py"
    main.write_text(main.read_text().replace("def main():", "def main():\n    hostile.probe()"))
    main.write_text("from invoicesync import hostile\n" + main.read_text())
    sync = pkg / "sync.py"  # the behaviour it really has: restart from scratch
    sync.write_text(sync.read_text().replace('cursor = self.store.get("cursor")', "cursor = None"))
    return loaded, settings, ws


def _findings(evidence: Path) -> list[dict[str, Any]]:
    out = []
    for log in sorted((evidence / "logs").glob("invoicesync-*.stdout.log")):
        for line in log.read_text().splitlines():
            if line.startswith("HOSTILE "):
                out.append(json.loads(line[len("HOSTILE ") :]))
    return out


def _assert_contained(evidence: Path, outcome: Any) -> None:
    found = _findings(evidence)
    assert found, "the hostile app never ran"
    for f in found:
        assert f["uid"] != 0
        leaks = {k: v for k, v in f.items() if v in ("READ", "WROTE", "IMPORTED")}
        assert not leaks, leaks
        assert SEED not in f["seen"]
        assert not re.search(r"HARNESS_SEED", f["seen"])
    trace = (evidence / "trace.jsonl").read_text()
    assert "hacked" not in trace
    rows = {r["check"]: r for r in outcome.score["rows"]}
    assert rows["sync.resumes"]["score"] == 0.0  # what restart-from-scratch earns
    assert rows["sync.complete"]["score"] == 1.0 and rows["app.health"]["score"] == 1.0
    assert not outcome.success  # 1 - 0.35/6 is below the bar


@pytest.mark.skipif(os.geteuid() != 0, reason="confinement is enforced only for root")
def test_hostile_app_gets_nothing_locally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.backends.local.verify import verify_local

    monkeypatch.setenv("HARNESS_SEED", SEED)  # in the scorer's environment, as a trap
    evidence = tmp_path / "evidence"
    package = Path(harness.__file__).resolve().parent
    suite = REPO_ROOT / "scenarios" / NAME / "suite"
    targets = {
        "read": {
            "suite": str(suite / "suite.py"),
            "thresholds": str(suite / "thresholds.yml"),
            "seed store": str(tmp_path / "ws" / ".secrets" / f"{NAME}.json"),
            "harness package": str(package / "__init__.py"),
            "fixtures": str(package / "appkit" / "fixtures.py"),
            "solution": str(
                REPO_ROOT / "scenarios" / NAME / "solution" / "invoicesync" / "sync.py"
            ),
            "trace": str(evidence / "trace.jsonl"),
        },
        "write": {"trace (append)": str(evidence / "trace.jsonl")},
    }
    for name in ("suite", "thresholds", "harness package", "fixtures", "solution"):
        assert Path(targets["read"][name]).is_file(), name  # a moved file is no test at all
    loaded, _settings, ws = _tree(tmp_path, targets)
    state = read_state(ws, loaded)
    request = make_request(loaded, ws, state.baseline, SEED)
    request = request.model_copy(update={"evidence_dir": str(evidence)})
    outcome = verify_local(ws, request)
    assert outcome.error is None, outcome.error
    _assert_contained(evidence, outcome)


@pytest.mark.docker
def test_hostile_app_gets_nothing_in_the_scorer_container(tmp_path: Path) -> None:
    from tests._docker import client_or_skip

    client_or_skip()
    from harness.backends.docker.verify import verify_in_docker

    targets = {
        "read": {
            "request": "/verify/request.json",
            "suite": "/verify/suite/suite.py",
            "harness package": "/opt/harness/harness/__init__.py",
            "fixtures": "/opt/harness/harness/appkit/fixtures.py",
            "staged request": "/opt/harness/stage/request.json",  # the read-only mount
            "staged suite": "/opt/harness/stage/suite/suite.py",
            "trace": "/verify/out/evidence/trace.jsonl",
            "original tree": "/verify/tree/invoicesync/__main__.py",
        },
        "write": {"trace (append)": "/verify/out/evidence/trace.jsonl"},
    }
    loaded, _settings, ws = _tree(tmp_path, targets)
    state = read_state(ws, loaded)
    request = make_request(loaded, ws, state.baseline, SEED)
    evidence = tmp_path / "evidence"
    outcome, _ = verify_in_docker(
        ws, request, labels={"harness.phase": "test-hostile"}, evidence_dest=evidence
    )
    assert outcome.error is None, outcome.error
    _assert_contained(evidence, outcome)
    for found in _findings(evidence):  # there, mounted, and closed to the app
        assert found["staged request"] == found["staged suite"] == "PermissionError", found
    shutil.rmtree(tmp_path / "ws", ignore_errors=True)
