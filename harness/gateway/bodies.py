"""Bodies relayed as the bytes they came in, with only the model's name changed.

The gateway parses each body once (it must read the model, the limits, the usage) but
serialising it again costs as much as parsing, and for an agent's long conversation far
more than the rest of a call. Where the only change is the model's name, the name is
replaced in the bytes instead: ``"model"`` must occur exactly once as a key, with that
value, spelled plainly (no ``\\u`` escape anywhere in the body, so that the key has
one spelling), and then it is the body's own top-level ``model`` (which the parsed body
says has that value). Anything else returns None and the caller serialises the body.
"""

from __future__ import annotations

import json
import re
from typing import Any

KEY = re.compile(rb'"model"[ \t\r\n]*:[ \t\r\n]*')  # JSON's whitespace only


def with_model(raw: bytes, body: dict[str, Any], model: str) -> bytes | None:
    """``raw`` (the bytes ``body`` was parsed from) with the top-level ``model`` set to
    ``model``; None where that cannot be done safely in the bytes."""
    old = body.get("model")
    if not isinstance(old, str) or b"\\u" in raw:
        return None  # no name, or a key that may be spelled otherwise
    key = KEY.search(raw)
    if key is None or KEY.search(raw, key.end()) is not None:
        return None  # not spelled plainly, or also nested, or given twice
    if old == model:
        return raw
    value = json.dumps(old).encode()
    if not raw.startswith(value, key.end()):  # the value spelled otherwise
        return None
    end = key.end() + len(value)
    return raw[: key.start()] + b'"model":' + json.dumps(model).encode() + raw[end:]


def streamed_with_usage(raw: bytes, body: dict[str, Any]) -> bytes | None:
    """``raw`` asking for a streamed reply with ``stream_options.include_usage``: the bytes
    as they are if the call says so itself, else with the option put first in the object
    when the call gives no ``stream_options`` at all; None otherwise."""
    if body.get("stream") is not True:
        return None
    opts = body.get("stream_options")
    if isinstance(opts, dict) and opts.get("include_usage") is True:
        return raw
    if "stream_options" in body or b"stream_options" in raw or b"\\u" in raw:
        return None
    head = raw.lstrip()
    if not head.startswith(b"{"):
        return None
    return b'{"stream_options":{"include_usage":true},' + head[1:]
