"""The image graph: which image folders exist, who their parent is, and their content hash.

An image is a folder ``images/<name>/`` holding a ``Dockerfile`` (``ARG PARENT`` /
``FROM ${PARENT}``) and an optional ``image.yml`` declaring ``parent: <name>``. An image
with ``parent: null`` is a root of the graph: it is built on Debian's ``bookworm``, or on
the suite its ``suite:`` names (``debian:<suite>`` or a debootstrapped one). The tag of
a built image is ``harness/<name>:<12 hex>``, the hex being sha256 over the folder's files
and the parent image id, so an edit rebuilds exactly that image and its descendants.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.config.settings import Settings
from harness.errors import UserError
from harness.images.bootstrap import SUITE, SUITES

REPOSITORY_PREFIX = "harness/"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
ROOT = None  # parent value of the graph's root (the base image)


@dataclass(frozen=True)
class ImageRef:
    """A built image: graph name, full tag (``harness/<name>:<hex>``) and image id."""

    name: str
    tag: str
    id: str


@dataclass(frozen=True)
class ImageDef:
    """One image folder: its name, location and declared parent (None for the root)."""

    name: str
    path: Path
    parent: str | None
    suite: str = SUITE  # the Debian suite of the root image under a graph root

    @property
    def repository(self) -> str:
        return f"{REPOSITORY_PREFIX}{self.name}"


def images_dir(override: Path | None = None) -> Path:
    """Folder holding the image definitions: argument, ``$HARNESS_IMAGES_DIR`` or repo's."""
    if override is not None:
        return Path(override)
    return Settings.from_env().images_root


def list_names(root: Path) -> list[str]:
    """Names of every image folder (those holding a Dockerfile), sorted."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "Dockerfile").is_file())


def load(name: str, root: Path) -> ImageDef:
    """Read ``images/<name>/``; a bad name or a broken image.yml is the user's to fix."""
    folder = root / name
    if not NAME_RE.match(name) or not (folder / "Dockerfile").is_file():
        known = ", ".join(list_names(root)) or "none"
        raise UserError(
            f"unknown image {name!r} (known: {known})",
            file=folder,
            fix=f"create {folder}/Dockerfile or use one of the known names",
        )
    parent: str | None = "base" if name != "base" else ROOT
    suite: object = SUITE
    meta = folder / "image.yml"
    if meta.is_file():
        try:
            data = yaml.safe_load(meta.read_text()) or {}
        except yaml.YAMLError as exc:
            raise UserError(f"invalid YAML: {exc}", file=meta, fix="fix the syntax") from exc
        if not isinstance(data, dict):
            raise UserError("expected a mapping", file=meta, fix="write `parent: <name>`")
        if "parent" in data:
            parent = data["parent"]
        suite = data.get("suite", SUITE)
    if parent is not None and (not isinstance(parent, str) or not NAME_RE.match(parent)):
        raise UserError(
            f"parent must be an image name, got {parent!r}",
            file=meta,
            field="parent",
            fix="name a folder under images/, e.g. `parent: base`",
        )
    if parent == name:
        raise UserError("an image cannot be its own parent", file=meta, field="parent")
    if suite not in SUITES or (suite != SUITE and parent is not None):
        raise UserError(
            f"suite {suite!r} is not a Debian suite harness roots images on, or the image "
            "is not a root",
            file=meta,
            field="suite",
            fix=f"use one of {', '.join(SUITES)} with `parent: null`, or drop `suite:`",
        )
    return ImageDef(name=name, path=folder, parent=parent, suite=str(suite))


def chain(name: str, root: Path) -> list[ImageDef]:
    """The definitions from the root down to ``name``; rejects cycles."""
    out: list[ImageDef] = []
    seen: set[str] = set()
    current: str | None = name
    while current is not None:
        if current in seen:
            raise UserError(
                f"image parents form a cycle through {current!r}",
                file=root / current / "image.yml",
                field="parent",
                fix="make the chain end at base",
            )
        seen.add(current)
        image = load(current, root)
        out.append(image)
        current = image.parent
    return list(reversed(out))


def context_files(folder: Path) -> list[Path]:
    """Files of a build context in a stable order (caches and editor droppings skipped)."""
    files = [
        p
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith("~")
    ]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def content_hash(image: ImageDef, parent_id: str) -> str:
    """12 hex of sha256 over the context files (path, mode, bytes) and the parent id."""
    digest = hashlib.sha256()
    digest.update(f"parent\0{parent_id}\0".encode())
    for path in context_files(image.path):
        rel = path.relative_to(image.path).as_posix()
        mode = "x" if os.access(path, os.X_OK) else "-"
        data = path.read_bytes()
        digest.update(f"file\0{rel}\0{mode}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:12]
