"""Per-trial keys: given at start, issued at run time, or read from a file that is re-read
when it changes (the file is the truth: a key removed from it is revoked)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import yaml

from harness.errors import UserError
from harness.gateway.calls import KeyInfo


def load_keys(path: str | Path) -> dict[str, KeyInfo]:
    """A keys file: ``{key: {trial, agent, model}}`` as JSON or YAML."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(f"cannot read keys: {exc}", file=p) from None
    if not isinstance(data, dict):
        raise UserError("keys file must map key -> {trial, agent, model}", file=p)
    out = {}
    for key, info in data.items():
        info = info if isinstance(info, dict) else {"trial": info}
        out[str(key)] = KeyInfo(info.get("trial"), info.get("agent"), info.get("model"))
    return out


class KeyStore:
    def __init__(
        self, keys: dict[str, KeyInfo], keys_file: str | Path | None, require: bool
    ) -> None:
        self.keys: dict[str, KeyInfo] = dict(keys)  # given and issued
        self.keys_file = keys_file
        self._keys_path = os.fspath(keys_file) if keys_file else None
        self.require = require
        self._file_keys: dict[str, KeyInfo] = {}
        self._mtime: tuple[int, int, int] | None = None

    def _refresh(self) -> None:
        if not self._keys_path:
            return
        try:
            st = os.stat(self._keys_path)
        except OSError:
            return
        mtime = (st.st_mtime_ns, st.st_size, st.st_ino)  # mtime alone can miss quick rewrites
        if mtime != self._mtime:
            try:
                self._file_keys = load_keys(self._keys_path)
            except UserError:
                return  # half-written: keep the old keys, read it again next time
            self._mtime = mtime

    def issue(self, trial: str, agent: str | None = None, model: str | None = None) -> str:
        key = f"hk-{secrets.token_urlsafe(18)}"
        self.keys[key] = KeyInfo(trial, agent, model)
        return key

    def lookup(self, token: str) -> KeyInfo | None:
        """The key's owner; an anonymous owner when keys are not required; else None."""
        self._refresh()
        info = self.keys.get(token) or self._file_keys.get(token)
        if info is None and not self.require:
            return KeyInfo(None)
        return info

    def known(self, token: str) -> bool:
        self._refresh()
        return token in self.keys or token in self._file_keys
