"""Per-trial keys: given, issued, or read from a file that is re-read when it changes (a
key removed from it is revoked; a half-written file keeps the old keys)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.gateway.calls import KeyInfo
from harness.gateway.keys import KeyStore, load_keys

pytestmark = pytest.mark.unit


def test_a_keys_file_maps_key_to_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "keys.yml"
    path.write_text("hk-a: {trial: t1, agent: codex, model: m}\nhk-b: t2\n")
    assert load_keys(path) == {"hk-a": KeyInfo("t1", "codex", "m"), "hk-b": KeyInfo("t2")}
    path.write_text("- a list\n")
    with pytest.raises(UserError, match="must map key"):
        load_keys(path)
    with pytest.raises(UserError, match="cannot read keys"):
        load_keys(tmp_path / "absent.yml")


def test_issued_keys_and_the_anonymous_owner() -> None:
    strict = KeyStore({"given": KeyInfo("t0")}, None, require=True)
    key = strict.issue("t1", "codex", "m")
    assert key.startswith("hk-") and key != strict.issue("t1")
    assert strict.lookup(key) == KeyInfo("t1", "codex", "m") and strict.known("given")
    assert strict.lookup("hk-unknown") is None and not strict.known("hk-unknown")
    open_door = KeyStore({}, None, require=False)
    assert open_door.lookup("anything") == KeyInfo(None) and not open_door.known("anything")


def test_the_file_is_the_truth_and_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "keys.yml"
    path.write_text("hk-a: t1\n")
    store = KeyStore({}, path, require=True)
    assert store.lookup("hk-a") == KeyInfo("t1")
    path.write_text("hk-b: t2\n")  # same size, same second: the size+inode+ns mtime tell
    assert store.lookup("hk-a") is None and store.lookup("hk-b") == KeyInfo("t2")
    path.write_text("hk-b: [unclosed\n")  # half-written
    assert store.lookup("hk-b") == KeyInfo("t2")
    os.remove(path)
    assert store.known("hk-b")  # a vanished file keeps what was read
