"""What a scenario's code runs with: its pinned toolchain and its prepared dependencies.

Dependencies are resolved once on the host, where the package indexes are reachable
(Go modules with ``go mod download`` into a module cache keyed by go.mod + go.sum;
Python wheels with ``pip download``, installed into a site folder, keyed by the
requirements files), and cached under ``<cache>/deps/``. The offline agent container and
the network-less verifier mount those folders read-only (``GOMODCACHE`` with
``GOPROXY=off``; ``PYTHONPATH`` and ``pip --no-index --find-links``); ``--sandbox local``
points the same variables at the host folders. Keys come from the files at the baseline
commit, so what the agent edits never changes what is mounted.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import InfraError, UserError
from harness.provision.envcheck import classify_go
from harness.provision.pyreqs import imported_by_tests, project_requirements
from harness.provision.toolchain import (
    CONTAINER_GOROOT,
    GoChoice,
    choose_go,
    go_root,
    pip_cert_args,
    python_refusal,
)
from harness.scenario.model import LoadedScenario
from harness.util import trialgit

CONTAINER_DEPS = "/opt/harness-deps"
REQUIREMENT_FILES = ("requirements.txt", "requirements-dev.txt", "requirements-test.txt")


@dataclass
class Provision:
    """A scenario's toolchain and dependency folders on the host, and how to expose them."""

    runner: str
    go: GoChoice | None = None
    goroot: Path | None = None
    gomod: Path | None = None
    wheels: Path | None = None
    pysite: Path | None = None
    python: str | None = None  # declared environment.python
    notes: list[str] = field(default_factory=list)

    def mounts(self) -> dict[str, str]:
        """Host folder -> container path, all mounted read-only."""
        out: dict[str, str] = {}
        if self.goroot:
            out[str(self.goroot)] = CONTAINER_GOROOT
        if self.gomod:
            out[str(self.gomod)] = f"{CONTAINER_DEPS}/gomod"
        if self.wheels:
            out[str(self.wheels)] = f"{CONTAINER_DEPS}/wheels"
        if self.pysite:
            out[str(self.pysite)] = f"{CONTAINER_DEPS}/site"
        return out

    def env(self, *, on_host: bool, phase: str = "verify") -> dict[str, str]:
        """Variables for a sandbox on this host (``on_host``) or in a container; ``$PATH``
        and ``$PYTHONPATH`` in values stand for the current value (see ``expand``).

        The verifier gets the installed requirements on ``PYTHONPATH``. The agent does
        not (they would shadow a Python agent's own packages); it gets
        ``HARNESS_DEPS_SITE`` and an offline pip (``pip install -r requirements.txt``
        installs from the prepared wheels)."""
        inside = not on_host  # paths as the sandbox sees them

        def where(host: Path, container: str) -> str:
            return container if inside else str(host)

        env: dict[str, str] = {}
        if self.runner == "go":
            env["GOTOOLCHAIN"] = "local"
            env["GOPROXY"] = "off"
        if self.goroot:
            root = where(self.goroot, CONTAINER_GOROOT)
            env["GOROOT"] = root
            env["PATH"] = f"{root}/bin:$PATH"
        if self.gomod:
            env["GOMODCACHE"] = where(self.gomod, f"{CONTAINER_DEPS}/gomod")
        if self.wheels:
            env["PIP_NO_INDEX"] = "1"
            env["PIP_FIND_LINKS"] = where(self.wheels, f"{CONTAINER_DEPS}/wheels")
        if self.pysite:
            site = where(self.pysite, f"{CONTAINER_DEPS}/site")
            if phase == "verify":
                env["PYTHONPATH"] = f"{site}:$PYTHONPATH"
            else:
                env["HARNESS_DEPS_SITE"] = site
                env["PIP_BREAK_SYSTEM_PACKAGES"] = "1"  # Debian's python3 is PEP 668-managed
        return env

    def record(self) -> dict[str, Any]:
        """For run.json and the report: what was chosen and why."""
        return {
            "go": self.go.label if self.go else None,
            "go_reason": self.go.reason if self.go else None,
            "go_modules": self.gomod.name if self.gomod else None,
            "python_wheels": self.wheels.parent.name if self.wheels else None,
            "python": self.python,
            "notes": self.notes,
        }


def _test_sources(ws: Path, baseline: str, most: int = 200) -> list[str]:
    """The baseline's Python test files (``test_*.py``, ``*_test.py``, ``conftest.py``)."""
    listing = trialgit.baseline_read(ws, ["ls-tree", "-r", "--name-only", baseline]) or ""
    names = [
        n
        for n in listing.splitlines()
        if re.search(r"(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$", n)
    ]
    return [t for n in names[:most] if (t := _at_baseline(ws, baseline, n))]


def _at_baseline(ws: Path, baseline: str, name: str) -> str | None:
    """A file of the baseline, read from harness's own git dir (never the agent's)."""
    return trialgit.baseline_read(ws, ["show", f"{baseline}:{name}"])


def provision(
    loaded: LoadedScenario, ws: Path, baseline: str, *, on_host: bool = False
) -> Provision:
    """The toolchain and prepared dependencies for a set-up workspace (cached, idempotent).

    The first call for given baseline files downloads (network needed); later calls reuse
    the cache. ``on_host``: the code runs on this host (``--sandbox local``), not in an
    image. Raises UserError for an unusable declaration, InfraError for a toolchain that
    cannot be had. A download that fails (``Unprepared``: no module proxy, no package
    index) is a note, not a failure: what could not be prepared is missing at verify
    time, where the baseline check makes a build that needs it an ``error``.
    """
    scn = loaded.scenario
    runner = scn.runner(ws)
    declared_go = getattr(scn.environment, "go", None)
    declared_py = getattr(scn.environment, "python", None)
    prov = Provision(runner=runner, python=declared_py)
    if runner == "go":
        go_mod = _at_baseline(ws, baseline, "go.mod")
        try:
            prov.go = choose_go(declared_go, go_mod)
        except UserError as exc:
            raise UserError(exc.message, file=loaded.path, field=exc.field, fix=exc.fix) from None
        if prov.go.release:
            prov.goroot = go_root(prov.go.release)
        go_sum = _at_baseline(ws, baseline, "go.sum")
        if go_mod and _requires(go_mod):
            try:
                prov.gomod = go_modules(go_mod, go_sum or "", prov.goroot)
            except Unprepared as exc:  # prepared lazily: only a build that needs one fails
                prov.gomod = _empty_dir("gomod")
                prov.notes.append(f"Go modules not prepared: {exc.message}")
    else:
        refusal = python_refusal(declared_py, on_host=on_host)
        if refusal:
            raise UserError(
                refusal,
                file=loaded.path,
                field="environment.python",
                fix='declare environment.python: "3.11" or run with --sandbox local on a host '
                "that has that interpreter",
            )
        texts = {n: _at_baseline(ws, baseline, n) for n in REQUIREMENT_FILES}
        present = {n: t for n, t in texts.items() if t and _has_requirements(t)}
        pyproject = _at_baseline(ws, baseline, "pyproject.toml")
        runtime, tests = project_requirements(pyproject, _at_baseline(ws, baseline, "setup.py"))
        tests += [
            r for r in imported_by_tests(pyproject, _test_sources(ws, baseline)) if r not in tests
        ]
        if runtime:
            present["project-requirements.txt"] = "\n".join(runtime) + "\n"
        if tests:
            present["project-test-requirements.txt"] = "\n".join(tests) + "\n"
        _prepare_python(prov, present, bool(tests))
    return prov


_FAILED: dict[Path, str] = {}  # dependency folders whose download failed in this process


class Unprepared(InfraError):
    """A download that failed (no module proxy, no package index): setup goes on, and
    verification is an ``error`` only if a build really needs what is missing."""


def _prepare_python(prov: Provision, present: dict[str, str], tests: bool) -> None:
    """Wheels for what can be prepared; notes for what could not (the test extras are a
    convenience: the rest is tried without them)."""
    while present:
        try:
            prov.wheels, prov.pysite = python_wheels(present)
            return
        except Unprepared as exc:
            if tests and "project-test-requirements.txt" in present:
                present.pop("project-test-requirements.txt")
                prov.notes.append(f"test extras not prepared: {exc.message}")
                continue
            prov.notes.append(f"Python requirements not prepared: {exc.message}")
            return


def _empty_dir(kind: str) -> Path:
    """An empty dependency folder: what is mounted when nothing could be prepared, so
    local and Docker runs see the same (nothing) instead of the host's own cache."""
    path = _deps_dir(kind, "empty")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _requires(go_mod: str) -> bool:
    return any(line.split()[:1] == ["require"] for line in go_mod.splitlines())


def _has_requirements(text: str) -> bool:
    return any(line.strip() and not line.strip().startswith("#") for line in text.splitlines())


def _key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:16]


def _deps_dir(kind: str, key: str) -> Path:
    from harness.config.settings import cache_dir

    return cache_dir() / "deps" / kind / key


def go_modules(go_mod: str, go_sum: str, goroot: Path | None) -> Path:
    """A module cache holding every module go.mod requires (``go mod download``)."""
    from harness.images.build import file_lock

    key = _key(go_mod, go_sum)
    dest = _deps_dir("gomod", key)
    if (dest / ".complete").exists():
        return dest
    if dest in _FAILED:  # asked again in this process (agent phase, then verify): no retry
        raise Unprepared(_FAILED[dest])
    go = str(goroot / "bin" / "go") if goroot else shutil.which("go")
    if not go:
        raise InfraError("no Go toolchain to prepare modules with", fix="install golang-go")
    with file_lock(f"gomod-{key}"):
        if (dest / ".complete").exists():
            return dest
        with tempfile.TemporaryDirectory(prefix="harness-gomod-") as tmp:
            mod = Path(tmp) / "mod"
            mod.mkdir()
            (mod / "go.mod").write_text(go_mod)
            (mod / "go.sum").write_text(go_sum)
            cache = Path(tmp) / "cache"
            env = {
                **os.environ,
                "GOMODCACHE": str(cache),
                "GOFLAGS": "-modcacherw -mod=mod",
                "GOTOOLCHAIN": "local",
                "GOPATH": str(Path(tmp) / "path"),
                "GOCACHE": str(Path(tmp) / "build"),
            }
            if goroot:
                env["GOROOT"] = str(goroot)
            if env.get("GOPROXY", "") == "":
                env.pop("GOPROXY", None)  # the default proxy, for a host that reaches it
            proc = subprocess.run(
                [go, "mod", "download"],
                cwd=mod,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if proc.returncode != 0:
                out = proc.stderr or proc.stdout
                why = classify_go(out, mod)
                if why and why.startswith("toolchain"):
                    raise InfraError(f"could not prepare the Go modules: {why}")
                tail = " | ".join(out.strip().splitlines()[-2:])
                _FAILED[dest] = f"could not prepare the Go modules go.mod requires: {tail}"
                raise Unprepared(
                    _FAILED[dest], fix="run setup where the Go module proxy (GOPROXY) is reachable"
                )
            (cache / ".complete").write_text("go mod download\n")
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                shutil.rmtree(dest)
            shutil.move(str(cache), dest)
    return dest


def python_wheels(requirements: dict[str, str]) -> tuple[Path, Path]:
    """Wheels for the requirements files, and a site folder with them installed."""
    from harness.images.build import file_lock

    key = _key(*(f"{n}\n{t}" for n, t in sorted(requirements.items())))
    dest = _deps_dir("python", key)
    if (dest / ".complete").exists():
        return dest / "wheels", dest / "site"
    if dest in _FAILED:
        raise Unprepared(_FAILED[dest])
    with file_lock(f"python-{key}"):
        if (dest / ".complete").exists():
            return dest / "wheels", dest / "site"
        with tempfile.TemporaryDirectory(prefix="harness-wheels-") as tmp:
            work = Path(tmp)
            args: list[str] = []
            for name, text in requirements.items():
                (work / name).write_text(text)
                args += ["-r", str(work / name)]
            pip = [sys.executable, "-m", "pip"]
            steps = [
                [*pip, "download", "-q", *pip_cert_args(), "-d", str(work / "wheels"), *args],
                [
                    *pip,
                    "install",
                    "-q",
                    "--no-index",
                    "--find-links",
                    str(work / "wheels"),
                    "--target",
                    str(work / "site"),
                    "--no-compile",
                    *args,
                ],
            ]
            for cmd in steps:
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    tail = " | ".join((proc.stderr or proc.stdout).strip().splitlines()[-2:])
                    _FAILED[dest] = f"could not prepare the Python requirements: {tail}"
                    raise Unprepared(
                        _FAILED[dest],
                        fix="run setup where the package index is reachable (PIP_CERT for a "
                        "TLS proxy)",
                    )
            (work / "wheels").mkdir(exist_ok=True)
            (work / "site").mkdir(exist_ok=True)
            staged = work / "out"
            staged.mkdir()
            shutil.move(str(work / "wheels"), staged / "wheels")
            shutil.move(str(work / "site"), staged / "site")
            (staged / ".complete").write_text("pip download + install --target\n")
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                shutil.rmtree(dest)
            shutil.move(str(staged), dest)
    return dest / "wheels", dest / "site"
