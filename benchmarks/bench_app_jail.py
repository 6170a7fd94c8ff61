"""What the allowlist jail costs an app start: a tiny HTTP app started to healthy through
``AppProcess`` in the allowlist jail (minimal root, in the scoring's network namespace)
against the previous deny-list jail (the host's root with protected paths covered, the
host's network), side by side, alternating rounds. Needs root with namespaces.

    python benchmarks/bench_app_jail.py [--rounds 10]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.appkit.jail import Jail  # noqa: E402
from harness.appkit.jailroot import unshare_argv  # noqa: E402
from harness.appkit.netns import private_network  # noqa: E402
from harness.appkit.procs import AppProcess  # noqa: E402

APP = (
    "import http.server, sys\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        self.send_response(200); self.end_headers()\n"
    "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n"
)


class DenyListJail(Jail):
    """The jail as it was: protected paths covered on the host's own root."""

    def wrap(self, argv: Sequence[str]) -> list[str]:
        drop = ["setpriv", f"--reuid={self.uid}", f"--regid={self.uid}", "--clear-groups"]
        drop += ["--no-new-privs", "--"]
        mounts = [
            f"mount -t tmpfs -o size=4k,mode=000 x {shlex.quote(str(p))}"
            if p.is_dir()
            else f"mount --bind /dev/null {shlex.quote(str(p))}"
            for p in self.hidden
        ]
        return unshare_argv(" && ".join([*mounts, 'exec "$@"']), [*drop, *map(str, argv)])


def start_once(kind: type[Jail], tree: Path, logs: Path) -> float:
    jail = kind(tree)
    try:
        began = time.monotonic()
        with AppProcess([jail.python, "app.py", "{port}"], cwd=tree, logs=logs, jail=jail) as app:
            app.start()
            return time.monotonic() - began
    finally:
        jail.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    rounds = parser.parse_args().rounds
    tmp = Path(tempfile.mkdtemp(prefix="bench-app-jail-"))
    (tmp / "tree").mkdir()
    (tmp / "tree" / "app.py").write_text(APP)
    old: list[float] = []
    new: list[float] = []
    for _ in range(rounds):
        old.append(start_once(DenyListJail, tmp / "tree", tmp / "logs"))
        with private_network():
            new.append(start_once(Jail, tmp / "tree", tmp / "logs"))
    o, n = statistics.median(old), statistics.median(new)
    print(f"deny-list jail  median start-to-healthy {o:.3f}s  ({rounds} rounds)")
    print(f"allowlist jail  median start-to-healthy {n:.3f}s  ({rounds} rounds)")
    print(f"ratio allowlist / deny-list: {n / o:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
