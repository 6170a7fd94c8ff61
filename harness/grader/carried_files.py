"""What a carry writes: the carried thresholds and the ledgers' lines under the new scorer.

Pure text in, text out for the thresholds (``carried_text``: the commit's file, its
``scorer:`` line the new scorer, a ``carried:`` entry added); a ledger's lines of the old
scorer rewritten as the new scorer's, every other line kept byte for byte (``rekey``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from harness.errors import UserError


def carried_text(
    text: str, old: str, new: str, said: dict[str, Any], unproven: list[str] | None = None
) -> str:
    """The commit's thresholds with the new scorer, and where the calibration came from
    added to ``carried:`` (a list: one entry a carry)."""
    data = yaml.safe_load(text)
    lines = text.splitlines(keepends=True)
    stamp = re.compile(rf"^scorer:[ \t]*['\"]?{old}['\"]?[ \t]*(#.*)?$")
    at = [i for i, line in enumerate(lines) if stamp.match(line.rstrip("\r\n"))]
    earlier = data.get("carried", []) if isinstance(data, dict) else None
    if not isinstance(data, dict) or len(at) != 1 or data.get("scorer") != old:
        raise UserError(
            "the thresholds name their scorer other than in one `scorer:` line",
            field="scorer",
            fix="calibrate again",
        )
    if isinstance(earlier, dict):  # the first carries wrote one entry, not a list
        earlier = [earlier]
    if not isinstance(earlier, list):
        raise UserError(
            "`carried:` is not a list of carries", field="carried", fix="calibrate again"
        )
    ending = "\r\n" if lines[at[0]].endswith("\r\n") else "\n"
    lines[at[0]] = f"scorer: {new}{ending}"
    kept = [ln for ln in without_key(lines, "carried")]
    entry = {**said, **({"unproven": unproven} if unproven else {})}
    block = yaml.safe_dump({"carried": [*earlier, entry]}, sort_keys=False)
    return "".join(kept).rstrip("\r\n") + ending + block.replace("\n", ending)


def without_key(lines: list[str], key: str) -> list[str]:
    """The lines of a YAML mapping without one top-level key and what is indented under it."""
    out, skipping = [], False
    for line in lines:
        if line.startswith(f"{key}:"):
            skipping = True
            continue
        if skipping and (line[:1] in (" ", "\t", "-") or not line.strip()):
            continue
        skipping = False
        out.append(line)
    return out


def rekey(path: Path, old: str, new: str) -> int:
    """A ledger's lines of scorer ``old`` as scorer ``new``'s; every other line (another
    scorer's, or one that does not parse) kept byte for byte. How many moved."""
    try:
        lines = path.read_bytes().splitlines(keepends=True)
    except OSError:
        return 0
    out, moved = [], 0
    for line in lines:
        data = _parsed(line)
        if data is not None and data.get("scorer") == old:
            text = json.dumps({**data, "scorer": new}, separators=(",", ":"), ensure_ascii=False)
            line = text.encode() + b"\n"
            moved += 1
        out.append(line)
    if moved:
        path.write_bytes(b"".join(out))
    return moved


def _scorer_lines(path: Path, scorer: str) -> list[bytes]:
    try:
        lines = path.read_bytes().splitlines()
    except OSError:
        return []
    return [line.strip() for line in lines if (_parsed(line) or {}).get("scorer") == scorer]


def _parsed(line: bytes) -> dict[str, Any] | None:
    """A ledger line's object, or None for a line that does not parse as one."""
    try:
        data = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        return None
    return data if isinstance(data, dict) else None


def lines_changed(then: Path, now: Path, scorer: str) -> list[str]:
    """Ledger lines of ``scorer`` at the commit (``then``) that the work tree (``now``) no
    longer holds byte for byte: a scoring edited or dropped since, which a carry would
    stamp with the new scorer. Lines added since stay (scored later by the same scorer,
    as a mutants run does; git shows who added them)."""
    held = list(_scorer_lines(now, scorer))
    missing = 0
    for line in _scorer_lines(then, scorer):
        if line in held:
            held.remove(line)
        else:
            missing += 1
    return [f"{now.name}: {missing} line(s) of scorer {scorer[:16]} changed or gone since the "
            "commit"] if missing else []  # fmt: skip
