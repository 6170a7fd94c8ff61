"""``harness images prune`` and ``harness sandbox cleanup`` (cli/images.py): what they list,
remove and keep; the engine and the builder are stand-ins here."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from docker.errors import APIError, ImageNotFound
from typer.testing import CliRunner

import harness.cli.images as images_cli
from harness.errors import InfraError

pytestmark = pytest.mark.unit


def leftover(name: str, keep: str = "") -> Any:
    return SimpleNamespace(keep=keep, line=lambda: f"container {name}")


@pytest.fixture
def removed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    gone: list[Any] = []
    found = [leftover("old"), leftover("busy", keep="its trial is running")]
    monkeypatch.setattr(images_cli, "find_leftovers", lambda *a, **kw: found)

    def remove(items: list[Any]) -> dict[str, int]:
        gone.extend(i for i in items if not i.keep)
        return {"containers": 1, "networks": 0}

    monkeypatch.setattr(images_cli, "remove_leftovers", remove)
    return gone


def cleanup(*args: str) -> Any:
    return CliRunner().invoke(images_cli.sandbox_app, list(args))  # its one command


def test_cleanup_lists_what_goes_and_what_stays(removed: list[Any]) -> None:
    got = cleanup("--dry-run")
    assert got.exit_code == 0
    assert got.output.splitlines() == [
        "remove  container old",
        "keep    container busy: its trial is running",
        "dry run: 1 object(s) would be removed",
    ]
    assert removed == []


def test_cleanup_without_a_terminal_asks_for_yes(removed: list[Any]) -> None:
    got = cleanup()  # CliRunner's stdin is no terminal
    assert got.exit_code == 0 and "pass --yes to remove them" in got.output and removed == []
    done = cleanup("--yes")
    assert done.exit_code == 0 and done.output.endswith("1 containers, 0 networks removed\n")
    assert [r.line() for r in removed] == ["container old"]


def test_cleanup_with_nothing_to_remove_or_a_bad_age(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(images_cli, "find_leftovers", lambda *a, **kw: [])
    assert cleanup().output == "nothing to remove\n"
    bad = cleanup("--older-than", "soon")
    assert bad.exit_code == 2 and "error: " in bad.output


def test_cleanup_that_cannot_reach_the_engine_is_exit_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(*a: object, **kw: object) -> list[Any]:
        raise InfraError("the Docker engine is not running")

    monkeypatch.setattr(images_cli, "find_leftovers", down)
    got = cleanup("--yes")
    assert got.exit_code == 3 and "error: the Docker engine is not running" in got.output


class Images:
    def __init__(self) -> None:
        self.removed: list[str] = []

    def list(self, filters: dict[str, str]) -> list[Any]:
        assert filters == {"label": "harness=1"}
        return [
            SimpleNamespace(labels={}, tags=["harness/base:new", "harness/base:old"]),
            SimpleNamespace(labels={"harness.image": "bootstrap"}, tags=["harness/boot:x"]),
            SimpleNamespace(labels={}, tags=["harness/env:gone", "harness/env:held"]),
        ]

    def remove(self, tag: str) -> None:
        if tag == "harness/env:gone":
            raise ImageNotFound("gone")
        if tag == "harness/env:held":
            raise APIError("in use", explanation="image is being used by a container")
        self.removed.append(tag)


def test_prune_removes_stale_tags_and_keeps_current_and_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = Images()
    builder = SimpleNamespace(
        root="/defs",
        client=SimpleNamespace(images=engine),
        current_tag=lambda n: "harness/base:new",
    )
    monkeypatch.setattr(images_cli, "ImageBuilder", lambda: builder)
    monkeypatch.setattr(images_cli.graph, "list_names", lambda root: ["base"])
    dry = CliRunner().invoke(images_cli.images_app, ["prune", "--dry-run"])
    assert dry.output.splitlines() == [
        "would remove harness/base:old",
        "would remove harness/env:gone",
        "would remove harness/env:held",
    ]
    assert engine.removed == []
    done = CliRunner().invoke(images_cli.images_app, ["prune"])
    assert done.exit_code == 0 and engine.removed == ["harness/base:old"]
    assert "removed harness/base:old" in done.output
    assert "kept harness/env:held: image is being used by a container" in done.output
    assert "env:gone" not in done.output  # gone already: nothing to say
