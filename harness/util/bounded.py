"""Parsing text an agent wrote (TOML, JSON) without letting its shape crash the parser.

``tomllib`` and ``json`` recurse once per nesting level: a 5,000-deep array in a
``pyproject.toml`` (or one line of test output) raises ``RecursionError``, which no
``except TOMLDecodeError`` catches, and the verifier ended in ``error``. Here a text over
``MAX_BYTES`` or nested deeper than ``MAX_DEPTH`` (counted without parsing) is refused as
malformed, like any other text that does not parse: ``None``.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

MAX_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 200


def nesting(text: str) -> int:
    """The deepest run of opening brackets and braces (strings not told apart: an
    over-count only refuses a text sooner)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
    return deepest


def _sane(text: str) -> bool:
    if len(text) > MAX_BYTES:
        return False
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # cannot be nested deeper
        return True
    return nesting(text) <= MAX_DEPTH


def toml(text: str) -> dict[str, Any] | None:
    """The TOML document, or None when it does not parse or is too deep or large."""
    if not _sane(text):
        return None
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, MemoryError, ValueError):
        return None


def json_value(text: str) -> tuple[bool, Any]:
    """(parsed, the JSON value); (False, None) when it does not parse or is too deep."""
    if not _sane(text):
        return False, None
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError, MemoryError):
        return False, None
