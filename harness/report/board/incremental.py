"""What lets a second ``harness board`` over unchanged results write almost nothing.

A run's page depends on its folder (the three result files, the diff, the trial log,
the gateway's transcript and telemetry, the scorer's images), on two fields filled in
across runs (its era and, with merged versions, its agent version) and on the code that
renders it. ``run_signature`` sums all of that up from ``stat`` calls alone (no file is
read); ``Manifest`` (``<board>/.board-pages.json``) keeps, per page, the signature it was
rendered from and the page file's own ``stat``, so a page is rendered again only when
an input changed or the page itself was touched. Pages drawn from every run (overview,
entrants) are rendered each time and written only when their text differs.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from harness.util.fs import stat_signature, write_atomic

MANIFEST = ".board-pages.json"
RUN_FILES = ("run.json", "progress.json", "verify/report.json", "workspace.diff", "trial.log")
RUN_TREES = ("gateway", "verify/evidence")


def _tree(path: str, out: list[str]) -> None:
    """Every file below ``path`` with its stat, in name order ("-" when missing)."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        out.append("-")
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            out.append(f"{entry.name}/")
            _tree(entry.path, out)
        else:
            out.append(f"{entry.name}={stat_signature(entry.path)}")
    out.append("..")


def run_signature(run_dir: str, indexed: str, *derived: str) -> str:
    """A digest of everything a run page is built from, by ``stat`` only; ``indexed`` is
    the signature of its three result files the run index has just checked ("" when
    read from the folders: they are stat'ed here), ``derived`` the values filled in from
    other runs (era, agent version) and the code's."""
    names = RUN_FILES[3:] if indexed else RUN_FILES
    parts = [indexed, *(stat_signature(f"{run_dir}/{name}") for name in names)]
    for tree in RUN_TREES:
        _tree(f"{run_dir}/{tree}", parts)
    parts.extend(derived)
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


def code_signature(*modules: Any) -> str:
    """A digest of the source files that render a page: new code, new pages."""
    digest = hashlib.blake2b(digest_size=12)
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()


def _page_stat(path: str | Path) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def page_entry(page: str | Path, signature: str) -> list[Any] | None:
    """What the manifest keeps of a page just written from ``signature`` (None: the
    page is not there)."""
    stat = _page_stat(page)
    return None if stat is None else [signature, *stat]


class Manifest:
    """The signature each page was rendered from, read from and saved to the board."""

    def __init__(self, out: Path) -> None:
        self.path = out / MANIFEST
        self.pages: dict[str, list[Any]] = {}
        self.valid = False
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and isinstance(doc.get("pages"), dict):
                self.pages, self.valid = doc["pages"], True
        except (OSError, ValueError):
            pass
        self.fresh: dict[str, list[Any]] = {}

    def has(self, key: str) -> bool:
        """True when the last build recorded a page named ``key``."""
        return key in self.pages

    def current(self, page: str | Path, key: str, signature: str) -> bool:
        """True when ``page`` (named ``key``) was rendered from ``signature`` and is
        unchanged on disk since; it is then kept as it is."""
        seen = self.pages.get(key)
        if seen is None or seen[0] != signature or _page_stat(page) != seen[1:]:
            return False
        self.fresh[key] = seen
        return True

    def keep(self, key: str, entry: list[Any] | None) -> None:
        """Record ``entry`` (``page_entry``, None: no page there) for the page ``key``."""
        if entry is not None:
            self.fresh[key] = entry

    def save(self) -> None:
        """Keep only the pages of this build (written atomically: a derived artefact);
        unchanged, it is not written at all."""
        if self.valid and self.fresh == self.pages:
            return
        write_atomic(self.path, json.dumps({"pages": self.fresh}), durable=False)


def write_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` (atomically, no fsync) unless it already holds it."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, ValueError):
        pass
    write_atomic(path, text, durable=False)
    return True
