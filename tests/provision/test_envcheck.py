"""Telling an environment failure from the code's: Go toolchain and dependency failures,
a declared Python requirement missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.provision.envcheck import classify_go, classify_pytest

pytestmark = pytest.mark.unit


def test_go_toolchain_failures_are_named_with_the_fix(tmp_path: Path) -> None:
    old = (
        "go: errors parsing go.mod:\n"
        "/x/go.mod:3: invalid go version '1.24.4': must match format 1.23\n"
    )
    msg = classify_go(old, tmp_path)
    assert msg and msg.startswith("toolchain:") and "environment.go" in msg
    new = "go: go.mod requires go >= 1.30 (running go 1.24.11; GOTOOLCHAIN=local)\n"
    assert "1.30" in (classify_go(new, tmp_path) or "")


def test_go_dependency_failures_but_not_the_modules_own_packages(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/app\n\ngo 1.24\n")
    ext = "app.go:3:8: no required module provides package github.com/x/y; to add it:\n"
    assert (classify_go(ext, tmp_path) or "").startswith("dependency:")
    own = "app.go:3:8: no required module provides package example.com/app/newpkg; to add\n"
    assert classify_go(own, tmp_path) is None
    off = "go: example.com/greet@v1.0.0: module lookup disabled by GOPROXY=off\n"
    assert classify_go(off, tmp_path)
    assert classify_go("app.go:5:2: undefined: Foo\n", tmp_path) is None


def test_offline_lookup_of_a_package_the_module_lacks_is_the_code_s(tmp_path: Path) -> None:
    """Issue 50: go looks a package the main module lacks up in the whole module graph,
    so offline it fails on an unrelated module; the import at that position is the
    module's own package (never written): the code's failure, not the environment's."""
    (tmp_path / "go.mod").write_text("module example.com/app\n\ngo 1.24\n")
    (tmp_path / "gab").mkdir()
    (tmp_path / "gab" / "x_test.go").write_text(
        'package gab\n\nimport (\n\t"testing"\n\n\t"example.com/app/sorting"\n'
        '\t"github.com/x/y"\n)\n'
    )
    lookup = ": github.com/davecgh/go-spew@v1.1.1: module lookup disabled by GOPROXY=off\n"
    assert classify_go("gab/x_test.go:6:2" + lookup, tmp_path) is None
    assert (classify_go("gab/x_test.go:7:2" + lookup, tmp_path) or "").startswith("dependency:")
    own = "cannot find module providing package example.com/app/sorting: module lookup disabled"
    assert classify_go(own + " by GOPROXY=off\n", tmp_path) is None
    both = "gab/x_test.go:6:2" + lookup + "gab/x_test.go:7:2" + lookup
    assert "x_test.go:7:2" in (classify_go(both, tmp_path) or "")


def test_go_writing_the_read_only_module_cache_is_a_missing_dependency(tmp_path: Path) -> None:
    """Under the test user, go 1.24 reports a module the prepared (read-only) cache lacks
    as a failed mkdir there, and only as build-output events: still a dependency."""
    cache = "/cache/deps/gomod/empty"

    def events(text: str) -> str:
        build = {"ImportPath": "example.com/greet", "Action": "build-output", "Output": text}
        fail = {"Action": "fail", "Package": "example.com/app/app", "FailedBuild": "x"}
        return "\n".join(json.dumps(e) for e in (build, fail))

    for text in (
        f"app/app.go:3:8: mkdir {cache}/cache: permission denied\n",
        f"app/app.go:3:8: mkdir {cache}/cache/download/example.com: read-only file system\n",
    ):
        msg = classify_go(events(text), tmp_path, modcache=cache)
        assert msg and msg.startswith("dependency:") and "app/app.go:3:8" in msg, msg
        assert "{" not in msg  # go's line, not the JSON event
        assert classify_go(events(text), tmp_path) is None  # which cache: only when known
    other = events("app/app.go:9:2: open /work/data.txt: permission denied\n")
    assert classify_go(other, tmp_path, modcache=cache) is None  # the code's own file


def test_pytest_missing_declared_requirement(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("# deps\nTiny-Dep==1.0\n")
    out = "E   ModuleNotFoundError: No module named 'tiny_dep'\n"
    assert (classify_pytest(out, tmp_path) or "").startswith("dependency:")
    assert classify_pytest("E   ModuleNotFoundError: No module named 'ledger'\n", tmp_path) is None
    assert classify_pytest("/usr/bin/python3: No module named pytest\n", tmp_path)
