"""Per-trial sandbox overhead, and cold vs warm ``ensure_image``.

Overhead: one "trial" is DockerSandbox start, three execs, a copy in, a copy out, stop.
The baseline, measured side by side in the same run (alternating), is a bare
``docker run --rm`` of the same three commands through the docker CLI. Prints medians and
the ratio harness/baseline.

Images: "warm" is ``ensure_image`` of the scorer chain when everything is built (only tag
checks); "cold" builds a one-line child of the current base in a temporary images folder
(so shared images are never deleted), then removes it.

    python benchmarks/bench_sandbox.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import secrets
import shlex
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from harness.images import ImageBuilder, ensure_image, images_dir
from harness.sandbox.base import SandboxSpec
from harness.sandbox.cleanup import cleanup
from harness.sandbox.docker import DockerSandbox

COMMANDS = [["true"], ["python3", "-c", "print(1)"], ["sh", "-c", "ls / >/dev/null"]]


def harness_trial(image: str, tmp: Path, label: str) -> float:
    src = tmp / "in.txt"
    src.write_text("payload\n")
    began = time.perf_counter()
    box = DockerSandbox(SandboxSpec(phase="control", image=image, labels={"harness.trial": label}))
    try:
        box.start()
        for cmd in COMMANDS:
            assert box.exec(cmd, timeout=60).ok
        box.copy_in(src, "in.txt")
        box.copy_out("in.txt", tmp / "out.txt")
    finally:
        box.stop()
    return time.perf_counter() - began


def bare_run(image: str, label: str) -> float:
    script = " && ".join(shlex.join(c) for c in COMMANDS)
    began = time.perf_counter()
    subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "--label",
            f"harness.trial={label}",
            image,
            "sh",
            "-c",
            script,
        ],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - began


def image_times() -> tuple[float, float]:
    began = time.perf_counter()
    ensure_image("scorer")
    warm = time.perf_counter() - began
    with tempfile.TemporaryDirectory(prefix="bench-images-") as tmp:
        root = Path(tmp)
        shutil.copytree(images_dir() / "base", root / "base")
        (root / "bench-leaf").mkdir()
        (root / "bench-leaf" / "Dockerfile").write_text(
            f"ARG PARENT\nFROM ${{PARENT}}\nRUN echo {secrets.token_hex(4)} > /bench\n"
        )
        builder = ImageBuilder(root=root)
        began = time.perf_counter()
        ref = builder.ensure("bench-leaf")
        cold = time.perf_counter() - began
        builder.client.images.remove(ref.tag, force=True)
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    image = ensure_image("base").tag
    label = f"bench-{secrets.token_hex(4)}"
    ours: list[float] = []
    bare: list[float] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
            harness_trial(image, Path(tmp), label)  # warm-up, not counted
            bare_run(image, label)
            for _ in range(args.rounds):
                ours.append(harness_trial(image, Path(tmp), label))
                bare.append(bare_run(image, label))
    finally:
        cleanup(trial=label)
    mo, mb = statistics.median(ours), statistics.median(bare)
    print(f"sandbox trial  (start+3 exec+copy in/out+stop): median {mo:.3f}s over {args.rounds}")
    print(f"bare docker run --rm (same 3 commands):          median {mb:.3f}s over {args.rounds}")
    print(f"overhead ratio harness/bare: {mo / mb:.2f}x")
    cold, warm = image_times()
    print(f"ensure_image cold (one-line child of base): {cold:.2f}s")
    print(f"ensure_image warm (scorer chain, all built): {warm:.3f}s")
    print(f"cold/warm ratio: {cold / warm:.0f}x")


if __name__ == "__main__":
    main()
