"""The Go build cache the hidden tests read: warm, shared between trials, never theirs.

Go's build cache is content-addressed but not verified on read: whoever can write it can
replace the compiled ``testing`` package (or any dependency) that a *later* trial links
its tests against. So when the controller is root the test user never gets a cache it
can write. Before a Go target runs, the cache's owner, a builder user of its own
(``uid + 1`` of the test user), compiles it with ``go test -exec true`` (compile, vet
and link; nothing of the tree is executed) into the shared cache, once per toolchain,
module requirements, build command (``-run`` left out: it selects tests, it builds
nothing) and tree (a marker only the controller writes, keyed by the tree's file
signatures); then the tests run as the test user with that cache read-only: Go reads an
initialised cache it cannot write, finds the tree's packages built, and compiles a miss
(a file the run itself changed, the canary's package) in its work folder without
storing it. So the targets of one tree share one build: five targets on one package
cost one compile, not five. Go 1.19's package index, which it would insist on storing, is off
(``GODEBUG=goindex=0``); a run that still fails on storing an entry is built by the
builder and run once more. The builder only
ever stores what the Go toolchain produced from the sources, so an entry can be no
more than an honest build output. Without root nothing is enforced (as before).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.verify.isolation.test_user import TestUser, owned_dir, run_reaped, test_home

BUILDER_OFFSET = 1  # the cache's owner is the test user's uid + 1


def builder_of(user: TestUser) -> TestUser:
    return TestUser(user.uid + BUILDER_OFFSET, user.read_all)


def build_command(cmd: list[str]) -> list[str]:
    """The test command without its ``-run`` selection, which changes no build."""
    out: list[str] = []
    skip = False
    for tok in cmd:
        if skip:
            skip = False
        elif tok == "-run":
            skip = True
        elif not tok.startswith("-run="):
            out.append(tok)
    return out


def warm_command(cmd: list[str]) -> list[str]:
    """The test command as a build that executes nothing: the same build flags
    (``-json`` builds ``test2json`` too), with ``-exec true`` in place of running it."""
    build = build_command(cmd)
    return [*build[:2], "-exec", "true", *build[2:]]


def tree_signature(tree: Path) -> str:
    """Path, size and modification time of every file of the tree (``.git`` left out,
    links not followed). A marker with a stale signature costs only time: Go's own
    cache keys are content hashes, so a miss is compiled, never a wrong build used."""
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = Path(folder, name)
            with contextlib.suppress(OSError):
                info = path.lstat()
                rel = path.relative_to(tree).as_posix()
                digest.update(f"{rel}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def warm_key(cmd: list[str], tree: Path, env: dict[str, str]) -> str:
    """What a warm cache depends on: the toolchain, the module's requirements, the
    build command and the tree's files."""
    digest = hashlib.sha256("\0".join(build_command(cmd)).encode())
    digest.update(tree_signature(tree).encode())
    go = shutil.which("go", path=env.get("PATH"))
    if go:
        info = Path(go).resolve().stat()
        digest.update(f"{Path(go).resolve()}:{info.st_mtime_ns}:{info.st_size}".encode())
    for name in ("go.mod", "go.sum"):
        with contextlib.suppress(OSError):
            digest.update(name.encode() + (tree / name).read_bytes())
    for key in ("GOFLAGS", "GOMODCACHE", "GOOS", "GOARCH", "CGO_ENABLED", "GODEBUG"):
        digest.update(f"{key}={env.get(key, '')}".encode())
    return digest.hexdigest()[:32]


@dataclass
class SharedCache:
    """The builder's cache for one target: ``env`` for the test user's run, read-only."""

    cmd: list[str]
    tree: Path
    env: dict[str, str]
    builder: TestUser
    timeout: float
    marker: Path

    def warm(self, *, force: bool = False) -> None:
        """Build as the builder, unless this toolchain, module and command are warm."""
        if self.marker.exists() and not force:
            return
        with test_home(self.builder.uid) as home:
            tmp = str(home / "tmp")
            env = {**self.env, "HOME": str(home), "TMPDIR": tmp, "GOTMPDIR": tmp}
            ran = run_reaped(warm_command(self.cmd), self.tree, env, self.timeout, self.builder)
        # A build that failed (the tree's own error) stored what did compile; building
        # this very tree again would fail again. Only a timeout leaves no marker.
        if ran.returncode is not None:
            with contextlib.suppress(OSError):  # no marker: warmed again next time
                self.marker.parent.mkdir(mode=0o755, exist_ok=True)
                self.marker.touch()

    def refused(self, output: str) -> bool:
        """Whether a run failed on storing into the cache (a miss Go must keep)."""
        return f"{self.env['GOCACHE']}/" in output and "permission denied" in output


def read_only_cache(
    cmd: list[str], tree: Path, go_env: dict[str, str], timeout: float, user: TestUser
) -> SharedCache:
    """The shared cache for ``cmd``, warmed as its builder; its ``env`` is the test
    user's (``GOCACHE`` the builder's, which it may read and not write)."""
    builder = builder_of(user)
    cache = owned_dir(Path(go_env["GOCACHE"]), builder.uid)
    gopath = owned_dir(Path(go_env["GOPATH"]), builder.uid)
    # Go 1.19 indexes the tree's packages into the cache keyed by file times and fails
    # when it cannot store an index the builder skipped (files too new): no index
    debug = ",".join(filter(None, [go_env.get("GODEBUG", ""), "goindex=0"]))
    env = {**go_env, "GODEBUG": debug, "GOCACHE": str(cache), "GOPATH": str(gopath)}
    # markers are the controller's (a root-owned folder in the cache, which Go leaves
    # alone): the tests cannot claim a cold cache warm
    marker = cache / ".harness-warm" / warm_key(cmd, tree, env)
    shared = SharedCache(cmd, tree, env, builder, timeout, marker)
    shared.warm()
    return shared
