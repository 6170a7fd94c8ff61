"""A tiny image definition (``image.yml`` + ``Dockerfile``) under an images folder."""

from __future__ import annotations

from pathlib import Path


def write_image(root: Path, name: str, parent: str, body: str) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "image.yml").write_text(f"parent: {parent}\n")
    (folder / "Dockerfile").write_text(f"ARG PARENT\nFROM ${{PARENT}}\n{body}\n")
