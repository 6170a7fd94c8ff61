"""Bootstrapping a root image: the host's Debian mirror and debootstrap's command."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.images.bootstrap import SCRIPTS, debootstrap_command, host_mirror

pytestmark = pytest.mark.unit


def test_host_mirror_reads_both_source_formats(tmp_path: Path) -> None:
    deb822 = tmp_path / "debian.sources"
    deb822.write_text(
        "Types: deb\nURIs: http://mirror.invalid/sec\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.invalid/debian\nSuites: bookworm bookworm-updates\n"
    )
    assert host_mirror([deb822]) == "http://mirror.invalid/debian"
    one_line = tmp_path / "sources.list"
    one_line.write_text("# c\ndeb [arch=amd64] http://other.invalid/d bookworm main\n")
    assert host_mirror([one_line, deb822]) == "http://other.invalid/d"


def test_a_suite_debootstrap_has_no_script_for_uses_sids(tmp_path: Path) -> None:
    cmd = debootstrap_command("forky", tmp_path, "http://mirror.invalid/debian")
    assert cmd[:5] == ["debootstrap", "--variant=minbase", "forky", str(tmp_path), cmd[4]]
    if not (SCRIPTS / "forky").exists():
        assert cmd[-1] == str(SCRIPTS / "sid")
    if (SCRIPTS / "bookworm").exists():
        plain = debootstrap_command("bookworm", tmp_path, "http://mirror.invalid/debian")
        assert plain[-1] == "http://mirror.invalid/debian"
