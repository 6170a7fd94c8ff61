"""Board page writes: atomic without an fsync (the board's way) against the anchor, the
same atomic write with an fsync per page (as the board wrote before), interleaved.

The board is a derived artefact (rebuilt from the results), so its pages need atomicity
for readers, not durability. Prints seconds per 1,000 pages and the ratio.

    python benchmarks/bench_board_writes.py [--pages 2000] [--rounds 4] [--dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.util.fs import write_atomic  # noqa: E402

PAGE = "<html><body>" + "<tr><td>run</td><td>0.75</td></tr>" * 300 + "</body></html>"


def write_pages(folder: Path, n: int, durable: bool) -> float:
    t0 = time.perf_counter()
    for i in range(n):
        write_atomic(folder / "runs" / f"run-{i:06d}.html", PAGE, durable=durable)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--dir", type=Path, default=None, help="where to write (default: a temp dir)")
    a = ap.parse_args()
    times: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(dir=a.dir) as tmp:
        for r in range(a.rounds):
            for durable in (r % 2 == 0, r % 2 != 0):  # alternate which goes first
                folder = Path(tmp) / f"r{r}-{int(durable)}"
                times[durable].append(write_pages(folder, a.pages, durable))
    fast, anchor = statistics.median(times[False]), statistics.median(times[True])
    per = 1000 / a.pages
    print(f"{'':28}{'s / 1,000 pages':>16}")
    print(f"{'atomic, no fsync (board)':28}{fast * per:16.3f}")
    print(f"{'atomic + fsync (anchor)':28}{anchor * per:16.3f}")
    print(f"ratio board / anchor: {fast / anchor:.3f}  ({a.rounds} rounds of {a.pages} pages)")


if __name__ == "__main__":
    main()
