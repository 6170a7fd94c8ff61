"""The host's harness source in a sandbox: mounted read-only under PYTHONPATH, or copied in
without bytecode; a local sandbox uses the host's own folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import harness
from harness.sandbox import inject
from harness.sandbox.base import SandboxSpec
from harness.sandbox.inject import (
    HARNESS_PYTHONPATH,
    harness_package,
    harness_source_mount,
    inject_harness_source,
)
from harness.sandbox.local import LocalSandbox

pytestmark = pytest.mark.unit


class _Box:
    """A sandbox that keeps what is copied in."""

    def __init__(self, into: Path) -> None:
        self.into = into
        self.copied: list[str] = []

    def copy_in(self, src: Path, dest: str) -> None:
        self.copied.append(dest)
        shutil.copytree(src, self.into / dest.lstrip("/"))


def test_the_package_is_mounted_read_only_under_the_pythonpath() -> None:
    package = Path(harness.__file__).resolve().parent
    assert harness_package() == package
    assert harness_source_mount() == {str(package): "/opt/harness/harness:ro"}


def test_a_copy_holds_the_source_without_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "src" / "harness"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "sub" / "m.py").write_text("X = 1\n")
    (package / "sub" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"\0")
    (package / "stale.pyc").write_bytes(b"\0")
    monkeypatch.setattr(inject, "harness_package", lambda: package)
    box = _Box(tmp_path / "box")
    assert inject_harness_source(box) == HARNESS_PYTHONPATH  # type: ignore[arg-type]
    assert box.copied == ["/opt/harness/harness"]
    copy = tmp_path / "box" / "opt" / "harness" / "harness"
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*")) == ["sub", "sub/m.py"]


def test_a_local_sandbox_uses_the_host_s_folder(tmp_path: Path) -> None:
    local = LocalSandbox(SandboxSpec(phase="verify", workspace=tmp_path))
    assert inject_harness_source(local) == str(harness_package().parent)
