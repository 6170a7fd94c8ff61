"""Put the files that steer a test runner back to the baseline before hidden tests run.

The agent's tree may carry files that change how pytest or ``go test`` behaves rather
than what the code does: a ``conftest.py`` that marks every report passed, a plugin in an
ini's ``addopts``, a ``.pth`` file, a ``TestMain`` beside the hidden tests, a
``go.mod`` ``replace``, a ``vendor/`` copy of a dependency. Each such path that differs
from the baseline (added, changed, deleted, turned into a link) is restored to its
baseline content or removed, unless the scenario allows it (``verify.runner-files``),
and the report lists it. The decision (``to_restore``) is pure; the tree is read and
written at the edges (``scan``, ``apply``), the baseline comes from git objects by their
ids (replace refs ignored).
"""

from __future__ import annotations

import configparser
import hashlib
import os
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from harness.errors import InfraError
from harness.util import bounded
from harness.util.deeptree import remove_tree, walk

PY_CONFIG = {"pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"}
PY_STARTUP = {"conftest.py", "sitecustomize.py", "usercustomize.py"}
# modules pytest imports before any test: a tree copy of one would replace it
# (the runner imports pytest before the tree is on sys.path; these names are refused too)
PY_SHADOWS = {"pytest", "_pytest", "pluggy"}
GO_REDIRECTS = {"go.work", "go.work.sum"}
NO_BASELINE = ""  # the blob id of a path the baseline does not have


@dataclass(frozen=True)
class Restored:
    path: str
    why: str
    action: str  # "restored" (baseline content back) | "removed" (not in the baseline)

    def line(self) -> str:
        return f"{self.path} ({self.why}: {self.action})"


def blob_id(data: bytes) -> str:
    """git's object id of a blob with this content."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _is_test_file(name: str, runner: str) -> bool:
    if runner == "go":
        return name.endswith("_test.go")
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _in_scope(path: PurePosixPath, scopes: Iterable[str]) -> bool:
    parent = path.parent.as_posix()
    return any(s in (".", "") or parent == s or parent.startswith(s + "/") for s in scopes)


def why_runner_file(path: str, runner: str, scopes: Iterable[str]) -> str | None:
    """Why ``path`` can steer the test runner (None: it cannot). ``scopes`` are the
    folders the hidden tests land in and the targets run (tree-relative, "." = all)."""
    p = PurePosixPath(path)
    parts, name = p.parts, p.name
    scopes = list(scopes)
    if any(part.endswith((".dist-info", ".egg-info")) for part in parts[:-1]):
        return "package metadata (entry-point plugins)"
    if name.endswith((".pth", ".egg-link")):
        return "python path hook"
    if "__pycache__" in parts[:-1] or name.endswith((".pyc", ".pyo")):
        return "compiled python"
    if any(part == "testdata" for part in parts[:-1]) and _in_scope(
        PurePosixPath(*parts[: parts.index("testdata")], "x"), scopes
    ):
        return "test data of the hidden tests"
    if runner == "go":
        if name in GO_REDIRECTS:
            return "go workspace redirection"
        if "vendor" in parts[:-1]:
            return "vendored dependency"
        if _is_test_file(name, runner) and _in_scope(p, scopes):
            return "test file in a tested package"
        return None
    if name in PY_STARTUP:
        return "pytest/python startup hook"
    if name in PY_CONFIG:
        return "test runner configuration"
    if parts[0] in PY_SHADOWS or (len(parts) == 1 and p.stem in PY_SHADOWS):
        return "module shadowing the test runner"
    if _is_test_file(name, runner) and _in_scope(p, scopes):
        return "test file in a tested folder"
    return None


def pytest_section(name: str, text: str) -> str | None:
    """The pytest settings a config file holds, canonically (None: none; a file that
    cannot be parsed counts as its raw text, so any change to it is a change)."""
    try:
        if name == "pyproject.toml":
            doc = bounded.toml(text)
            if doc is None:  # malformed, too deep or too large: its raw text counts
                return "raw:" + text
            tool = doc.get("tool", {})
            section = tool.get("pytest")
            return None if section is None else repr(sorted(section.items()))
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        key = {"setup.cfg": "tool:pytest", "tox.ini": "pytest"}.get(name, "pytest")
        if not parser.has_section(key):
            return None
        return repr(sorted(parser.items(key, raw=True)))
    except (configparser.Error, ValueError, TypeError, RecursionError):
        return "raw:" + text


def go_redirects(text: str) -> list[str]:
    """The ``module``, ``replace``, ``exclude`` and ``toolchain`` lines of a go.mod."""
    out: list[str] = []
    block: str | None = None
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = None
            elif block in {"replace", "exclude"}:
                out.append(f"{block} {' '.join(line.split())}")
            continue
        word = line.split()[0]
        if line.endswith("(") and word in {"replace", "exclude", "require", "retract"}:
            block = word
        elif word in {"module", "replace", "exclude", "toolchain", "godebug"}:
            out.append(" ".join(line.split()))
    return sorted(out)


def to_restore(
    tree: Mapping[str, str],
    baseline: Mapping[str, str],
    runner: str,
    scopes: Iterable[str],
    allowed: Iterable[str] = (),
    *,
    same_settings: Mapping[str, bool] | None = None,
) -> list[Restored]:
    """The runner-steering paths that differ from the baseline. ``tree``/``baseline``
    map path -> blob id (a link or special file gets an id no blob has); ``allowed``
    are the scenario's globs; ``same_settings[path]`` says a changed config file or
    go.mod kept its pytest section / redirect lines (so it is left alone)."""
    allowed = list(allowed)
    scopes = list(scopes)
    same = same_settings or {}
    out: list[Restored] = []
    for path in sorted(set(tree) | set(baseline)):
        if tree.get(path, NO_BASELINE) == baseline.get(path, NO_BASELINE):
            continue
        if any(fnmatchcase(path, g) or fnmatchcase(path, g.rstrip("/") + "/*") for g in allowed):
            continue
        name = PurePosixPath(path).name
        why = why_runner_file(path, runner, scopes)
        if why is None and name == "go.mod" and runner == "go":
            why = "module redirection"
        if why is None or same.get(path, False):
            continue
        out.append(Restored(path, why, "restored" if path in baseline else "removed"))
    return out


# ---- the edges: the tree on disk, the baseline in git ------------------------------------


def _git(tree: Path, args: list[str]) -> bytes:
    env = {**os.environ, "GIT_NO_REPLACE_OBJECTS": "1", "GIT_CONFIG_NOSYSTEM": "1"}
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    proc = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise InfraError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace')[-200:]}")
    return proc.stdout


def baseline_blobs(tree: Path, baseline: str) -> dict[str, str]:
    """path -> blob id of every file in the baseline commit (links get their own id)."""
    out: dict[str, str] = {}
    for entry in _git(tree, ["ls-tree", "-r", "-z", "--full-tree", baseline]).split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, _kind, oid = meta.decode().split()
        path = name.decode(errors="surrogateescape")
        out[path] = oid if mode != "120000" else "link:" + oid
    return out


HASH_CAP = 64 * 1024 * 1024  # a bigger runner file is not read: it counts as changed


def scan(tree: Path, wanted: Callable[[str], bool] = lambda _p: True) -> dict[str, str]:
    """path -> blob id of the ``wanted`` entries of the tree on disk (``.git`` left out);
    links, special and huge files get ids no blob has, so they always count as changed."""
    out: dict[str, str] = {}
    for folder, dirs, files in walk(tree):
        rel = Path(folder).relative_to(tree)
        if rel == Path("."):
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in list(dirs):
            if (Path(folder) / name).is_symlink():
                files.append(name)  # a link to a folder: an entry, never walked
                dirs.remove(name)
        for name in files:
            full = Path(folder) / name
            key = (rel / name).as_posix()
            if not wanted(key):
                continue
            if full.is_symlink():
                out[key] = "link:" + blob_id(os.fsencode(os.readlink(full)))
            elif full.is_file() and full.lstat().st_size <= HASH_CAP:
                out[key] = blob_id(full.read_bytes())
            else:
                out[key] = "special:" + key
    return out


def _remove(path: Path) -> None:
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
    else:
        remove_tree(path)


def _parent_dirs_real(tree: Path, rel: PurePosixPath) -> None:
    """Make every folder on the way to ``rel`` a real folder inside the tree."""
    here = tree
    for part in rel.parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            _remove(here)
        here.mkdir(exist_ok=True)


def settings_kept(tree: Path, baseline: str, path: str) -> bool:
    """A changed config file / go.mod whose test settings / redirects did not change."""
    name = PurePosixPath(path).name
    full = tree / path
    if full.is_symlink() or not full.is_file():
        return False
    try:
        before = _git(tree, ["cat-file", "blob", f"{baseline}:{path}"]).decode(errors="replace")
    except InfraError:
        before = None
    now = full.read_text(errors="replace")
    if name == "go.mod":
        return before is not None and go_redirects(before) == go_redirects(now)
    if name in PY_CONFIG - {"pytest.ini", ".pytest.ini"}:
        return pytest_section(name, now) == (pytest_section(name, before) if before else None)
    return False


def apply(tree: Path, baseline: str, blobs: Mapping[str, str], items: list[Restored]) -> None:
    """Restore or remove each item on disk."""
    for item in items:
        rel = PurePosixPath(item.path)
        full = tree / item.path
        _parent_dirs_real(tree, rel)
        if full.is_symlink() or full.exists():
            _remove(full)
        oid = blobs.get(item.path)
        if oid is None:
            continue
        if oid.startswith("link:"):
            os.symlink(os.fsdecode(_git(tree, ["cat-file", "blob", oid[5:]])), full)
        else:
            full.write_bytes(_git(tree, ["cat-file", "blob", oid]))


def restore_runner_files(
    tree: Path, baseline: str, runner: str, scopes: Iterable[str], allowed: Iterable[str]
) -> list[Restored]:
    """Find and restore every runner-steering path of ``tree``; returns what was done."""
    blobs = baseline_blobs(tree, baseline)
    scopes = list(scopes)

    def steers(path: str) -> bool:
        name = PurePosixPath(path).name
        return name == "go.mod" or why_runner_file(path, runner, scopes) is not None

    now = scan(tree, steers)
    candidates = to_restore(now, blobs, runner, scopes, allowed)
    same = {
        c.path: settings_kept(tree, baseline, c.path)
        for c in candidates
        if PurePosixPath(c.path).name in PY_CONFIG | {"go.mod"} and c.path in now
    }
    items = [c for c in candidates if not same.get(c.path, False)]
    apply(tree, baseline, blobs, items)
    return items
