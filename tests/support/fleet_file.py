"""A fleet.yml naming up to three hosts (a, b, c) that serve model ``m`` as ``org/m``."""

from __future__ import annotations

from pathlib import Path

import yaml


def write_fleet(tmp_path: Path, *urls: str) -> Path:
    names = ["a", "b", "c"]
    data = {
        "hosts": [{"name": n, "base_url": u} for n, u in zip(names, urls, strict=False)],
        "models": {"m": {"upstream": "org/m"}},
    }
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(data))
    return path
