"""One router per job: makespan of K concurrent multi-turn conversations, each through its
own trial gateway (its own key, its own telemetry file), over the heterogeneous test fleet
(prefill 350 / 1200 / 2200 tok/s, decode a tenth; one slot each; times ``--speedup``).

- shared: every trial gateway leases hosts from one ``RouterService`` (the job's router)
- per_trial: every trial gateway routes alone (what a job got before)
- round_robin: one shared router that ignores speeds

The ideal is the larger of (all work with a perfectly warm prompt cache) / (the fleet's
capacity) and the longest conversation run alone on the fastest host. Printed as ratios.

    python benchmarks/bench_router.py [--conversations 8] [--turns 6] [--speedup 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.fleet.config import parse_fleet  # noqa: E402
from harness.fleet.router_service import RouterService  # noqa: E402
from harness.fleet.telemetry import read_jsonl  # noqa: E402
from harness.gateway import GatewayServer  # noqa: E402
from harness.testing.lmstudio import TestHost  # noqa: E402

MODEL = "bench/model"
BASE_SPEEDS = {"slow": 350, "mid": 1200, "fast": 2200}  # prefill tokens/s (the issue's)
DECODE_RATIO = 0.1
ROUTING: dict = {}  # overrides of the fleet file's routing section


def fleet_for(urls: dict[str, str], strategy: str) -> object:
    return parse_fleet(
        {
            "hosts": [{"name": n, "base_url": u, "max_parallel": 1} for n, u in urls.items()],
            "models": {"coder": {"upstream": MODEL}},
            "routing": {
                "strategy": strategy,
                "cooldown": {"base_s": 0.5, "max_s": 5},
                **ROUTING,
            },
        }
    )


def plan(k: int, turns: int, seed: int = 7) -> list[dict]:
    """Per conversation: system prompt size, then (user chars, completion tokens) per turn."""
    rnd = random.Random(seed)
    return [
        {
            "system": rnd.choice([6000, 12000, 20000]),
            "turns": [
                (rnd.choice([400, 1200, 2400]), rnd.choice([16, 32, 64])) for _ in range(turns)
            ],
        }
        for _ in range(k)
    ]


async def converse(urls: list[str], keys: list[str], work: list[dict], tag: str) -> float:
    async with httpx.AsyncClient(timeout=600) as client:

        async def one(i: int) -> None:
            w = work[i]
            msgs = [{"role": "system", "content": f"{tag} conversation {i}. " + "s" * w["system"]}]
            for t, (chars, completion) in enumerate(w["turns"]):
                msgs.append({"role": "user", "content": f"turn {t}: " + "u" * chars})
                r = await client.post(
                    urls[i] + "/v1/chat/completions",
                    json={"model": "coder", "max_tokens": completion, "messages": msgs},
                    headers={"Authorization": f"Bearer {keys[i]}"},
                )
                r.raise_for_status()
                msgs.append(r.json()["choices"][0]["message"])

        t0 = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(len(work))))
        return time.monotonic() - t0


def run_mode(
    name: str, urls: dict[str, str], speeds: dict[str, float], work: list[dict], tmp: Path
) -> dict:
    strategy = "round_robin" if name == "round_robin" else "earliest_finish"
    cfg = fleet_for(urls, strategy)
    bench = {h: {"prefill_tps": s, "decode_tps": s * DECODE_RATIO} for h, s in speeds.items()}
    with contextlib.ExitStack() as stack:
        router_url = None
        if name != "per_trial":
            router_url = stack.enter_context(RouterService(cfg, bench=bench)).url
        gws = [
            stack.enter_context(
                GatewayServer(
                    cfg,
                    telemetry=tmp / f"{name}-trial-{i}.jsonl",
                    bench=bench,
                    router_url=router_url,
                )
            )
            for i in range(len(work))
        ]
        keys = [gw.issue_key(f"trial-{i}", "bench") for i, gw in enumerate(gws)]
        took = asyncio.run(converse([gw.url for gw in gws], keys, work, f"{name}-{time.time()}"))
    rows = [r for i in range(len(work)) for r in read_jsonl(tmp / f"{name}-trial-{i}.jsonl")]
    return {
        "makespan_s": took,
        "calls_per_host": {h: sum(1 for r in rows if r["host"] == h) for h in urls},
        "failed": sum(1 for r in rows if r["status"] != 200),
        "rows": rows,
    }


def ideal_seconds(rows: list[dict], speeds: dict[str, float]) -> float:
    """From the calls' token counts: each turn needs only its new prompt tokens (the rest
    warm in cache) plus its completion; a host of prefill p does P/p + C/(r p)."""
    per_trial: dict[str, list[dict]] = {}
    for r in sorted(rows, key=lambda r: r["ts"]):
        per_trial.setdefault(r["trial"], []).append(r)
    total, longest = 0.0, 0.0
    for calls in per_trial.values():
        work, prev = 0.0, 0
        for c in calls:
            new = max(0, c["prompt_tokens"] - prev)
            work += new + c["completion_tokens"] / DECODE_RATIO
            prev = c["prompt_tokens"] + c["completion_tokens"]
        total += work
        longest = max(longest, work / max(speeds.values()))
    return max(total / sum(speeds.values()), longest)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--conversations", type=int, default=8)
    p.add_argument("--turns", type=int, default=6)
    p.add_argument("--speedup", type=float, default=1.0, help="multiply all host speeds")
    p.add_argument("--affinity-slack", type=float, help="routing.affinity_slack (default 2)")
    p.add_argument("--json", type=Path, help="also write the figures as JSON")
    a = p.parse_args()
    if a.affinity_slack is not None:
        ROUTING["affinity_slack"] = a.affinity_slack
    speeds = {k: v * a.speedup for k, v in BASE_SPEEDS.items()}
    work = plan(a.conversations, a.turns)
    res: dict = {"speeds": speeds, "conversations": a.conversations, "turns": a.turns}
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        urls = {
            n: stack.enter_context(
                TestHost(
                    models=[MODEL],
                    prefill=s,
                    decode=s * DECODE_RATIO,
                    cache_entries=2 * a.conversations,
                )
            ).url
            for n, s in speeds.items()
        }
        for name in ("shared", "per_trial", "round_robin"):
            res[name] = run_mode(name, urls, speeds, work, Path(d))
    res["ideal_s"] = ideal_seconds(res["shared"]["rows"], speeds)
    lines = [
        f"== {a.conversations} concurrent conversations x {a.turns} turns, one gateway per "
        f"trial, hosts of prefill {' / '.join(f'{v:g}' for v in speeds.values())} tok/s ==",
        f"{'router':14}{'makespan s':>12}{'ideal s':>10}{'x ideal':>9}{'failed':>8}"
        "  calls per host",
    ]
    for name in ("shared", "per_trial", "round_robin"):
        r = res[name]
        r["vs_ideal"] = r["makespan_s"] / res["ideal_s"]
        lines.append(
            f"{name:14}{r['makespan_s']:12.2f}{res['ideal_s']:10.2f}{r['vs_ideal']:9.2f}"
            f"{r['failed']:8d}  {r['calls_per_host']}"
        )
    print("\n".join(lines))
    print(f"run time {time.monotonic() - t_start:.1f} s")
    if a.json:
        for name in ("shared", "per_trial", "round_robin"):
            res[name].pop("rows")
        a.json.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
