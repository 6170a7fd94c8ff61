"""A Go target built by its builder, then run by the test user without its sources.

``go test`` both compiles and runs, as one user: the run could write whatever the build
reads next, and the code under test could open the hidden ``_test.go`` files it was
compiled from (``runtime.Caller`` names them) and read its expectations. So a Go target
runs in two parts, as two users. The builder (the test user's uid + 1) lists the
target's packages (``go list``) and compiles each one's test binary (``go test -c``:
vet and build, nothing executed; cgo off unless the scenario declares it) into a
folder of its own, with a build cache of its own for this target: a copy of the
toolchain's read-only seed (``verify.go.seed``), removed afterwards. Then, with the
hidden test files and the canary's closed to everyone but the controller, the test
user runs each binary under ``test2json`` (its parent, as under ``go test -json``),
from the package's folder, with the flags ``go test`` gives it. The result is the
event stream and exit status ``go test -json`` gives: a package whose build failed
fails as ``[build failed]``, one without tests is skipped, the exit status is 0 only
when every package built and passed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.verify.go import seed as goseed
from harness.verify.isolation.test_user import TestUser, run_reaped, test_home

BUILDER_OFFSET = 1  # the builder is the test user's uid + 1
LIST_FORMAT = "{{.ImportPath}}\t{{.Dir}}\t{{if .Error}}error{{end}}"
GO_TEST_TIMEOUT = "10m0s"  # what ``go test`` gives a binary by default
HomeEnv = Callable[[Path], dict[str, str]]


def builder_of(user: TestUser | None) -> TestUser | None:
    return dataclasses.replace(user, uid=user.uid + BUILDER_OFFSET) if user else None


@dataclass(frozen=True)
class Package:
    import_path: str
    folder: Path


def _event(pkg: str, action: str, output: str | None = None) -> str:
    ev: dict[str, object] = {"Action": action, "Package": pkg}
    if output is not None:
        ev["Output"] = output
    return json.dumps(ev)


def parse_list(stdout: str, tree: Path) -> list[Package]:
    """``go list``'s packages that lie in ``tree`` (one ``path\\tdir\\terror`` a line)."""
    root = os.path.realpath(tree)
    found: list[Package] = []
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or not parts[0] or not parts[1]:
            continue
        real = os.path.realpath(parts[1])
        if real == root or real.startswith(root + os.sep):
            found.append(Package(parts[0], Path(real)))
    return found


@contextlib.contextmanager
def closed(paths: Iterable[Path]) -> Iterator[None]:
    """``paths`` (the controller's files) readable by nobody else while inside."""
    modes: list[tuple[Path, int]] = []
    try:
        for path in paths:
            with contextlib.suppress(OSError):
                if path.is_symlink() or not path.is_file() or path.stat().st_uid != os.geteuid():
                    continue
                modes.append((path, path.stat().st_mode & 0o7777))
                path.chmod(0o400)
        yield
    finally:
        for path, mode in modes:
            with contextlib.suppress(OSError):
                path.chmod(mode)


def _own_cache(seed: Path | None, dest: Path, uid: int | None) -> Path:
    """The builder's cache for one target: a copy of ``seed`` (or empty), its own."""
    if seed is not None:
        shutil.copytree(seed, dest, symlinks=True)
    else:
        dest.mkdir()
    if uid is not None:
        for folder, _dirs, files in os.walk(dest):
            os.chown(folder, uid, uid)
            for name in files:
                os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)
    return dest


def seed_for(env: dict[str, str]) -> Path | None:
    """The toolchain's seed: found under ``HARNESS_GOSEED`` (Docker: built before the
    verifier started, mounted read-only), or built now (on a host, by this process,
    before anything of the tree runs)."""
    root = env.get(goseed.ROOT_ENV)
    if not root:
        return None
    return goseed.find(Path(root), env) or goseed.build(Path(root), env)


def test2json(env: dict[str, str], dest: Path) -> Path | None:
    """The toolchain's ``test2json``, copied to ``dest`` (the test user runs it from
    there: it needs nothing else of the toolchain, which may sit where it cannot look)."""
    go = shutil.which("go", path=env.get("PATH"))
    if go is None:
        return None
    tool = Path(go).resolve().parent.parent / "pkg" / "tool"
    found = sorted(tool.glob("*/test2json")) if tool.is_dir() else []
    if not found:
        return None
    shutil.copyfile(found[0], dest)
    dest.chmod(0o755)
    return dest


def binary_flags(run: str | None, version: str) -> list[str]:
    """What ``go test -json -count=1 [-run X]`` passes its test binary."""
    major_minor = tuple(int(x) for x in version.removeprefix("go").split(".")[:2] if x.isdigit())
    verbose = "-test.v=test2json" if major_minor >= (1, 20) else "-test.v=true"
    flags = [verbose, "-test.paniconexit0", f"-test.timeout={GO_TEST_TIMEOUT}", "-test.count=1"]
    return [*flags, *([f"-test.run={run}"] if run is not None else [])]


def build_and_run(
    pattern: str,
    run: str | None,
    tree: Path,
    env: dict[str, str],
    timeout: float,
    user: TestUser | None,
    hidden: Sequence[Path],
    home_env: HomeEnv,
) -> tuple[int | None, str]:
    """``go test -json -count=1 PATTERN [-run RUN]``, built as the builder and run as
    ``user`` with ``hidden`` closed: (exit status, None on a timeout; the stream)."""
    deadline = time.monotonic() + timeout
    builder = builder_of(user)
    b_uid = builder.uid if builder else None
    lines: list[str] = []
    code: int | None = 0
    seed = seed_for(env)
    version = (goseed.key(env) or "go").split("-", 1)[0]
    # the test user reads no source: not even through CAP_DAC_READ_SEARCH on a host
    runner = dataclasses.replace(user, read_all=False) if user else None
    with test_home(b_uid) as bhome:
        bhome.chmod(0o711)  # the test user reaches its binaries, lists nothing
        cache = _own_cache(seed, bhome / "cache", b_uid)
        benv = {**env, **home_env(bhome), "GOCACHE": str(cache), "GOPATH": str(bhome / "gopath")}
        bins = bhome / "bin"
        bins.mkdir(mode=0o711)
        if b_uid is not None:
            os.chown(bins, b_uid, b_uid)
        listed = run_reaped(
            ["go", "list", "-e", "-f", LIST_FORMAT, pattern], tree, benv, timeout, builder
        )
        if listed.returncode is None:
            return None, listed.output
        packages = parse_list(listed.output, tree) if listed.returncode == 0 else []
        if not packages:
            return 1, listed.output  # no package (a bad pattern, a broken go.mod): go's words
        built: list[tuple[Package, Path]] = []
        for i, pkg in enumerate(packages):
            left = max(1.0, deadline - time.monotonic())
            out = bins / f"{i}.test"
            made = run_reaped(
                ["go", "test", "-c", "-o", str(out), pkg.import_path], tree, benv, left, builder
            )
            if made.returncode is None:
                return None, "\n".join([*lines, made.output])
            if made.returncode != 0:
                lines += made.output.splitlines()
                fail = f"FAIL\t{pkg.import_path} [build failed]\n"
                lines += [_event(pkg.import_path, "output", fail), _event(pkg.import_path, "fail")]
                code = 1
            elif not out.is_file():
                none = f"?   \t{pkg.import_path}\t[no test files]\n"
                lines += [_event(pkg.import_path, "output", none), _event(pkg.import_path, "skip")]
            else:
                built.append((pkg, out))
        tool = test2json(env, bhome / "test2json") if built else None
        if built and tool is None:
            return 127, "test2json: not found in the toolchain"
        with closed(hidden):
            for pkg, binary in built:
                left = max(1.0, deadline - time.monotonic())
                with test_home(user.uid if user else None) as home:
                    cmd = [str(tool), "-t", "-p", pkg.import_path, str(binary)]
                    cmd += binary_flags(run, version)
                    tenv = {**env, **home_env(home), "GOCACHE": str(seed or home / "cache")}
                    ran = run_reaped(
                        cmd, pkg.folder, tenv, left, runner, writable=[tree], readable=[bhome]
                    )
                lines.append(ran.output.rstrip("\n"))
                if ran.returncode is None:
                    return None, "\n".join(lines)
                if ran.returncode != 0:
                    code = 1
    return code, "\n".join(lines) + "\n"
