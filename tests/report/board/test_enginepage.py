"""Engine telemetry where users look: the run page's own section (per call TTFT,
prefill/decode rates, cache share and who timed it), and TTFT, decode rate and the
engine with its quantisation per entrant in ``report`` and on the board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.board.site import build_board
from harness.report.collect import collect
from harness.report.render import COLUMNS, CSV_FIELDS
from harness.report.summary import summarise
from tests.support.jobs_agents import write_result

pytestmark = pytest.mark.unit

FLEET = {
    "identifiers": {
        "smollm2-135m": {
            "hosts": {"local-engine": {"engine": "b11669-Debian", "quantization": "Q4_1"}}
        }
    },
    "hosts": {"local-engine": {"api": "llama.cpp"}},
}


def _engine_run(root: Path, run_id: str, decode: float) -> Path:
    run = write_result(
        root,
        "py/a",
        run_id,
        agent="alpha",
        model="smollm2-135m",
        usage={"calls": 1, "ttft_s": 0.2, "decode_tps": decode},
    )
    meta = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**meta, "fleet": FLEET}))
    (run / "gateway").mkdir()
    row = {
        "call": "c1",
        "status": 200,
        "prompt_tokens": 500,
        "completion_tokens": 40,
        "total_s": 0.6,
        "engine_timings": {"prompt_ms": 200.0, "prompt_per_second": 700.0,
                           "predicted_per_second": decode, "cache_n": 250.0},
    }  # fmt: skip
    (run / "gateway" / "telemetry.jsonl").write_text(json.dumps(row) + "\n")
    msg = {"call": "c1", "messages": [{"role": "user", "content": "fix it"}],
           "reply": {"role": "assistant", "content": "ok"}}  # fmt: skip
    (run / "gateway" / "transcript.jsonl").write_text(json.dumps(msg) + "\n")
    return run


def test_the_run_page_and_the_board_show_the_engine_telemetry(tmp_path: Path) -> None:
    root, site = tmp_path / "results", tmp_path / "site"
    _engine_run(root, "r-a-01", 180.0)
    _engine_run(root, "r-a-02", 120.0)
    write_result(root, "py/a", "r-a-03", agent="beta", score=0.5)  # no engine
    runs = collect(root)
    (table,) = summarise(runs)
    by_agent = {e.agent: e for e in table.entrants}
    alpha = by_agent["alpha"]
    assert alpha.decode_tps == 150.0 and alpha.ttft_s == 0.2
    assert alpha.engine == "llama.cpp b11669-Debian Q4_1" and by_agent["beta"].engine == "-"
    names = [n for n, _ in COLUMNS]
    assert {"engine", "ttft s", "decode tok/s"} <= set(names)
    assert {"engine", "ttft_s", "decode_tps"} <= set(CSV_FIELDS)
    assert by_agent["beta"].as_dict()["decode_tps"] is None  # unknown, not zero

    build_board(runs, site)
    page = (site / "runs" / "r-a-01.html").read_text()
    section = page.split('<section class="engine-telemetry">', 1)[1].split("</section>")[0]
    assert "<h2>engine telemetry</h2>" in section
    assert "<td>0.2</td><td>700</td><td>180</td><td>50%</td><td>engine</td>" in section
    assert "trial: ttft 0.2 s · prefill 700 tok/s · decode 180 tok/s · cache 50%" in section
    overview = (site / "index.html").read_text()
    assert "llama.cpp b11669-Debian Q4_1" in overview and "decode tok/s" in overview
    plain = (site / "runs" / "r-a-03.html").read_text()
    assert "no timed model calls" in plain
