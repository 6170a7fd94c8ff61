"""A harness cache folder of a test's own (so dependencies are really prepared there) that
shares the machine's Go downloads, toolchains, Go seeds and locks."""

from __future__ import annotations

from pathlib import Path

SHARED = ("downloads", "toolchains", "goseed-local", "goseed-docker", "locks")


def own_cache(tmp: Path) -> Path:
    from harness.config.settings import cache_dir

    real, cache = cache_dir(), tmp / "cache"
    cache.mkdir()
    for name in SHARED:
        (real / name).mkdir(parents=True, exist_ok=True)
        (cache / name).symlink_to(real / name)
    return cache
