"""The Go build cache a verification reads: built from the toolchain alone, read-only.

Go's build cache is content-addressed but not verified on read: whoever can write it
decides what a later build links (an action record pointing at another archive is
enough). So the only cache a verification shares with others is a *seed*: the standard
library compiled by the toolchain, from the toolchain's own sources, in a folder of its
own with nothing of any tree in it, by a process that runs no code of any trial (in
Docker a one-off container of its own, ``python -m harness.verify.go.seed ROOT``; on a
host the verifier, before any test). The seed is keyed by the toolchain and the build
settings (``key``), written under a temporary name and renamed when complete, and its
files keep the builder's umask (022): no uid a tree's code runs as can change them, and
in Docker it is mounted read-only as well. A trial's own packages are compiled by its
builder against that read-only seed: Go reads an initialised cache it cannot write and
keeps what it compiled in its work folder only, so nothing a trial builds or writes is
seen by another. Without a seed (not built yet, no room) the build gets an empty cache
of its own, removed afterwards: slower, never shared.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: the variables that change what ``go build std`` stores
KEY_ENV = ("GOFLAGS", "GOOS", "GOARCH", "GOAMD64", "CGO_ENABLED", "GOEXPERIMENT", "GODEBUG")
ROOT_ENV = "HARNESS_GOSEED"  # where a verification finds seeds (the request's env)
SEED_TIMEOUT_S = 900.0
_TOOL_ENV = ("PATH", "GOROOT", *KEY_ENV)


def tool_env(env: dict[str, str], cache: str, tmp: str) -> dict[str, str]:
    """Only what picks the toolchain and its build settings; no module, no tree. Go's
    telemetry is turned off in ``tmp`` (its mode file written there): Go 1.23+ would
    leave a counter process writing into ``tmp`` after it is removed."""
    out = {k: env[k] for k in _TOOL_ENV if k in env}
    with contextlib.suppress(OSError):
        mode = Path(tmp, ".config", "go", "telemetry", "mode")
        mode.parent.mkdir(parents=True, exist_ok=True)
        mode.write_text("off\n")
    out.update(
        {
            "GOCACHE": cache,
            "GOPATH": f"{tmp}/gopath",
            "HOME": tmp,
            "TMPDIR": tmp,
            "GOTMPDIR": tmp,
            "GOPROXY": "off",
            "GOTOOLCHAIN": "local",
            "GOWORK": "off",
            "GO111MODULE": "off",  # no go.mod anywhere near: std only
        }
    )
    return out


def _go(env: dict[str, str]) -> str | None:
    return shutil.which("go", path=env.get("PATH"))


def key(env: dict[str, str]) -> str | None:
    """The seed's name for the toolchain ``env`` selects (None: no ``go``)."""
    go = _go(env)
    if go is None:
        return None
    with tempfile.TemporaryDirectory(prefix="harness-goseed-key-") as tmp:
        try:
            ran = subprocess.run(
                [go, "env", "GOVERSION", "GOROOT", "GOTOOLDIR"],
                cwd=tmp,
                env=tool_env(env, f"{tmp}/cache", tmp),
                capture_output=True,
                text=True,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if ran.returncode != 0:
        return None
    digest = hashlib.sha256(ran.stdout.encode())
    tooldir = Path(ran.stdout.splitlines()[-1].strip())
    for tool in (Path(go).resolve(), tooldir / "compile", tooldir / "link"):
        with contextlib.suppress(OSError):
            info = tool.stat()
            digest.update(f"{tool}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    for name in KEY_ENV:
        digest.update(f"{name}={env.get(name, '')}\n".encode())
    version = ran.stdout.split("\n", 1)[0].strip() or "go"
    return f"{version}-{digest.hexdigest()[:24]}"


def find(root: Path, env: dict[str, str]) -> Path | None:
    """The complete seed under ``root`` for ``env``'s toolchain, if one was built."""
    name = key(env)
    if name is None:
        return None
    seed = root / name
    return seed if (seed / "README").is_file() and not seed.is_symlink() else None


def build(root: Path, env: dict[str, str]) -> Path | None:
    """Build (once) the seed under ``root`` for ``env``'s toolchain: ``go build std``
    in an empty folder, then renamed into place. Returns it (None: it could not be
    built; the caller builds with a cache of its own)."""
    name = key(env)
    go = _go(env)
    if name is None or go is None:
        return None
    seed = root / name
    if (seed / "README").is_file():
        return seed
    old = os.umask(0o022)  # whatever the caller's: nobody else may write a seed
    try:
        try:
            root.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=f".build-{name}-", dir=root))
        except OSError:  # a read-only seeds folder (a verifier container's)
            return None
        try:
            cache, tmp = work / "cache", work / "tmp"
            tmp.mkdir()
            ran = subprocess.run(
                [go, "build", "std"],
                cwd=tmp,
                env=tool_env(env, str(cache), str(tmp)),
                capture_output=True,
                timeout=SEED_TIMEOUT_S,
            )
            if ran.returncode != 0 or not (cache / "README").is_file():
                return None
            with contextlib.suppress(OSError):
                cache.rename(seed)  # a concurrent builder that won keeps its own
            return seed if (seed / "README").is_file() else None
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        os.umask(old)


def main(argv: list[str]) -> int:
    """``python -m harness.verify.go.seed ROOT [ENV-JSON]``: build the seed for this
    environment's Go (plus ENV-JSON's variables, ``$PATH`` standing for the current
    value) under ROOT: the Docker backend's seed container."""
    env = dict(os.environ)
    if len(argv) > 1:
        from harness.provision.toolchain import expand

        env.update(expand(json.loads(argv[1]), env))
    seed = build(Path(argv[0]), env)
    print(seed or "no seed built")
    return 0 if seed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
