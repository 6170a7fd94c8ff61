"""``python -m harness.testing.lmstudio``: one test host, until Ctrl-C."""

from __future__ import annotations

import argparse
import contextlib
import time

from harness.testing.lmstudio.host import TestHost
from harness.testing.lmstudio.state import Faults

DESCRIPTION = "An LM Studio-compatible model host for tests (never for users)."


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m harness.testing.lmstudio", description=DESCRIPTION)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=1234)
    p.add_argument(
        "--model",
        action="append",
        dest="models",
        help="model identifier (repeatable); default test-model",
    )
    p.add_argument("--prefill", type=float, default=1000.0, help="prompt tokens/second")
    p.add_argument("--decode", type=float, default=100.0, help="completion tokens/second")
    p.add_argument("--quant", default="Q4_K_M")
    p.add_argument("--format", default="gguf")
    p.add_argument("--arch", default="qwen3")
    p.add_argument("--context", type=int, default=8192, dest="context_length")
    p.add_argument("--max-context", type=int, default=32768)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--completion-tokens", type=int, default=16)
    p.add_argument("--cache-entries", type=int, default=8, help="prompts kept for prefix reuse")
    p.add_argument("--error-rate", type=float, default=0.0)
    p.add_argument("--rate-limit-rate", type=float, default=0.0)
    p.add_argument("--retry-after", type=float, default=1.0)
    p.add_argument("--drop-rate", type=float, default=0.0)
    p.add_argument("--drop-after", type=int, default=2)
    p.add_argument("--slow", type=float, default=0.0, dest="slow_s")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    faults = Faults(
        error_rate=a.error_rate,
        rate_limit_rate=a.rate_limit_rate,
        retry_after=a.retry_after,
        drop_rate=a.drop_rate,
        drop_after=a.drop_after,
        slow_s=a.slow_s,
        seed=a.seed,
    )
    host = TestHost(
        host=a.host,
        port=a.port,
        faults=faults,
        models=a.models or ["test-model"],
        prefill=a.prefill,
        decode=a.decode,
        quant=a.quant,
        format=a.format,
        arch=a.arch,
        context_length=a.context_length,
        max_context=a.max_context,
        parallel=a.parallel,
        completion_tokens=a.completion_tokens,
        cache_entries=a.cache_entries,
    )
    host.start()
    print(f"test host listening on {host.url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        while True:
            time.sleep(3600)
    host.stop()


if __name__ == "__main__":
    main()
