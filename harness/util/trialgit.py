"""The trial's own git directory, and git run on agent files with harness's own settings.

The agent owns its workspace, ``.git`` included: it may commit, rewrite history, set
``core.fsmonitor``, ``diff.external``, filters, textconv drivers, ``core.worktree``,
replace refs, alternates, ``include.path``, or make ``.git`` a file or a link. Nothing of
that may run or be followed by the host. So at setup, before any agent ran, the sealed
``.git`` is copied to a folder beside the workspace (``.<name>.harness/git``, outside the
agent's mount), together with the trusted workspace state; every later diff, staging and
changed-file list is computed from that copy with ``GIT_DIR`` / ``GIT_WORK_TREE`` set,
no system or global config, no replace objects, a throwaway index outside the workspace,
and an attributes file of harness's own that outranks the workspace's ``.gitattributes``.
Ignore rules are the *baseline's* ``.gitignore`` files, flattened into one exclude file:
an agent cannot hide a new file behind a ``.gitignore`` it wrote.

All output is bytes (``-z``); names that are not UTF-8 are decoded with backslash escapes.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import InfraError
from harness.util.deeptree import remove_tree, walk

# Every attribute that could make git convert, filter or drive a diff, unset for all paths
# (``$GIT_DIR/info/attributes`` has the highest precedence of all attribute files).
NEUTRAL_ATTRIBUTES = (
    "* !filter !diff !merge !text !eol !ident !working-tree-encoding !export-subst"
    " !whitespace !crlf\n"
)
CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.quotePath=false",
    "core.splitIndex=false",
    "core.bigFileThreshold=1m",
    "core.sparseCheckout=false",
    "core.protectNTFS=false",
    "core.protectHFS=false",
    "diff.external=",
    "diff.renames=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "status.showUntrackedFiles=all",
    "commit.gpgsign=false",
    "index.sparse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "protocol.allow=never",
)
PRIVATE_SUFFIX = ".harness"
FRESH_CONFIG = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
MAX_DIFF_FILE = 16 * 1024 * 1024  # a file larger than this (apparent size) is not diffed
MAX_DIFF_BYTES = 64 * 1024 * 1024  # workspace.diff stops here
LARGE = f", over the {MAX_DIFF_FILE}-byte diff limit"


def private_dir(workspace: Path) -> Path:
    """Harness's own folder for a workspace: beside it, never inside (never mounted)."""
    return workspace.parent / f".{workspace.name}{PRIVATE_SUFFIX}"


def git_dir(workspace: Path) -> Path:
    return private_dir(workspace) / "git"


def name(raw: bytes) -> str:
    """A path git printed, as text (non-UTF-8 bytes as ``\\xNN``)."""
    return raw.decode("utf-8", "backslashreplace")


def _env(gitdir: Path, worktree: Path | None, index: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    if index is not None:  # new objects of a throwaway index go beside it, not into gitdir
        objects = index.parent / "objects"
        objects.mkdir(exist_ok=True)
        env["GIT_OBJECT_DIRECTORY"] = str(objects)
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(gitdir / "objects")
    env.update(
        GIT_DIR=str(gitdir),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_LITERAL_PATHSPECS="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_PROTOCOL_FROM_USER="0",
        HOME="/nonexistent",
        XDG_CONFIG_HOME="/nonexistent",
    )
    if worktree is not None:
        env["GIT_WORK_TREE"] = str(worktree)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


def _cmd(gitdir: Path) -> list[str]:
    cmd = ["git"]
    for item in CONFIG:
        cmd += ["-c", item]
    cmd += ["-c", f"core.attributesFile={gitdir / 'info' / 'attributes'}"]
    cmd += ["-c", f"core.excludesFile={gitdir / 'info' / 'exclude'}"]
    return cmd


def run(
    gitdir: Path,
    args: list[str],
    *,
    worktree: Path | None = None,
    index: Path | None = None,
    stdin: bytes | None = None,
    check: bool = True,
    timeout: float = 600,
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` on harness's git dir ``gitdir`` (work tree ``worktree``), bytes out."""
    cmd = _cmd(gitdir)
    cwd = worktree if worktree is not None else gitdir
    result = subprocess.run(
        [*cmd, *args],
        cwd=cwd,
        env=_env(gitdir, worktree, index),
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        last = name(result.stderr).strip().splitlines()[-1:] or [f"exit {result.returncode}"]
        raise InfraError(f"git {' '.join(args[:2])} failed: {last[0]}")
    return result


def harden(gitdir: Path) -> None:
    """Make ``gitdir`` harness's own: no hooks, alternates, replace refs, worktree or
    includes; attributes neutral; ignore rules those of its HEAD commit (the baseline)."""
    remove_tree(gitdir / "hooks")
    (gitdir / "objects" / "info" / "alternates").unlink(missing_ok=True)
    remove_tree(gitdir / "refs" / "replace")
    (gitdir / "config").write_text(FRESH_CONFIG)  # nothing kept: no worktree, includes...
    for name_ in ("info/grafts", "shallow", "commondir", "gitdir"):
        (gitdir / name_).unlink(missing_ok=True)
    info = gitdir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(NEUTRAL_ATTRIBUTES)
    baseline = run(gitdir, ["rev-parse", "HEAD"]).stdout.decode().strip()
    (info / "exclude").write_text(baseline_excludes(gitdir, baseline))


def make_private(workspace: Path, trusted_git: Path) -> Path:
    """Copy the (still trusted) ``.git`` of a fresh workspace to harness's folder."""
    folder = private_dir(workspace)
    remove_tree(folder)
    folder.mkdir(parents=True)
    os.chmod(folder, 0o700)
    dest = folder / "git"
    shutil.copytree(trusted_git, dest, symlinks=True)
    harden(dest)
    return dest


def ensure_private(workspace: Path) -> Path:
    """Harness's git dir of ``workspace``; for a workspace set up by an older harness
    (none yet), made now from the workspace's ``.git`` and hardened."""
    gitdir = git_dir(workspace)
    if not (gitdir / "HEAD").is_file():
        source = workspace / ".git"
        if not source.is_dir() or source.is_symlink():
            raise InfraError(f"{workspace} has no harness git directory and no .git folder")
        make_private(workspace, source)
    return gitdir


def baseline_read(workspace: Path, args: list[str]) -> str | None:
    """Read-only git (``show``, ``ls-tree``) on the baseline of ``workspace``: from
    harness's git dir (a hand-made workspace's own ``.git`` when it has none), with no
    work tree, no replace refs and none of the user's config. None when git fails."""
    gitdir = git_dir(workspace)
    if not (gitdir / "HEAD").is_file():
        gitdir = workspace / ".git"
    try:
        out = run(gitdir, args, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def copy_git(workspace: Path, dest: Path) -> None:
    """Put a copy of harness's git dir at ``dest`` (the ``.git`` of a verifier's tree)."""
    shutil.copytree(ensure_private(workspace), dest, symlinks=True)


def _flatten(directory: str, line: str) -> str | None:
    """One ``.gitignore`` line of ``directory`` as a line of a root-level exclude file."""
    text = line.rstrip("\n")
    if not text.strip() or text.startswith("#"):
        return None
    neg = "!" if text.startswith("!") else ""
    pattern = text[1:] if neg else text
    body = pattern.rstrip("/")
    anchored = pattern.startswith("/") or "/" in body
    prefix = f"/{directory}/" if directory else "/"
    if anchored:
        return f"{neg}{prefix}{pattern.lstrip('/')}"
    return f"{neg}{prefix}**/{pattern}" if directory else f"{neg}{pattern}"


def baseline_excludes(gitdir: Path, baseline: str) -> str:
    """The baseline's ``.gitignore`` files as one exclude file (shallow ones first, so
    deeper rules win as in git) plus the run files goagentbench keeps in the root."""
    listing = run(gitdir, ["ls-tree", "-r", "-z", "--full-tree", baseline]).stdout
    files: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if path == b".gitignore" or path.endswith(b"/.gitignore"):
            files.append((name(path), meta.split()[2].decode()))
    lines = ["/.run-start.json", "/.run-progress.json"]
    for where, blob in sorted(files, key=lambda f: (f[0].count("/"), f[0])):
        directory = where.rpartition("/")[0]
        text = run(gitdir, ["cat-file", "blob", blob]).stdout.decode("utf-8", "replace")
        lines += [x for x in (_flatten(directory, raw) for raw in text.splitlines()) if x]
    return "\n".join(lines) + "\n"


@dataclass
class Staged:
    """What was staged from a work tree: the index, and what was left out and why."""

    index: Path
    skipped: dict[str, str] = field(default_factory=dict)  # name -> reason


def _split(out: bytes) -> list[bytes]:
    return [p for p in out.split(b"\0") if p]


def stage(gitdir: Path, worktree: Path, baseline: str, index: Path) -> Staged:
    """A throwaway index ``index`` holding the baseline with the work tree's changes.

    Only regular files and links are staged; special files, files over
    ``MAX_DIFF_FILE`` and nested repositories are left out and named in ``skipped``
    (a tracked path that became one of them stays as in the baseline).
    """
    staged = Staged(index)
    run(gitdir, ["read-tree", baseline], index=index)
    tracked = _split(run(gitdir, ["ls-files", "-z"], worktree=worktree, index=index).stdout)
    excludes = gitdir / "info" / "exclude"
    if not excludes.is_file() or excludes.is_symlink():  # a git dir harness did not harden
        excludes = index.parent / "exclude"
        excludes.write_text(baseline_excludes(gitdir, baseline))
    others = run(
        gitdir,
        ["ls-files", "-z", "--others", f"--exclude-from={excludes}"],
        worktree=worktree,
        index=index,
    ).stdout
    update: list[bytes] = []
    large: dict[bytes, str] = {}
    for raw, is_tracked in [*((t, True) for t in tracked), *((o, False) for o in _split(others))]:
        why = _unstageable(worktree, raw)
        if why is None or why == "missing":  # missing: a deleted tracked file, --remove
            update.append(raw)
        elif why.endswith(LARGE) and is_tracked:
            update.append(raw)  # hashed (streamed): a large file the agent left alone
            large[raw] = why
        else:
            staged.skipped[name(raw).rstrip("/")] = why
    if update:
        run(
            gitdir,
            ["update-index", "--add", "--remove", "--replace", "-z", "--stdin"],
            worktree=worktree,
            index=index,
            stdin=b"\0".join(update) + b"\0",
        )
    if large:
        _keep_baseline(gitdir, worktree, baseline, staged, large)
    return staged


def _keep_baseline(
    gitdir: Path, worktree: Path, baseline: str, staged: Staged, large: dict[bytes, str]
) -> None:
    """Large tracked files the agent changed: named in ``skipped``, kept as in the
    baseline in the index so the diff never holds them."""
    out = run(
        gitdir,
        ["diff", "--cached", "--name-only", "-z", "--no-renames", baseline, "--"],
        worktree=worktree,
        index=staged.index,
    ).stdout
    changed_large = [p for p in _split(out) if p in large]
    if not changed_large:
        return
    info = run(
        gitdir, ["ls-tree", "-z", "--full-tree", baseline, "--", *map(os.fsdecode, changed_large)]
    ).stdout
    run(gitdir, ["update-index", "-z", "--index-info"], index=staged.index, stdin=info)
    for raw in changed_large:
        staged.skipped[name(raw)] = large[raw]


def _unstageable(worktree: Path, raw: bytes) -> str | None:
    """Why the work tree's ``raw`` cannot be staged (None: it can)."""
    if raw.endswith(b"/"):
        return "a nested git repository (not diffed)"
    try:
        info = os.lstat(os.path.join(os.fsencode(worktree), raw))
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return None
    if stat.S_ISDIR(info.st_mode):
        return "missing"  # a tracked file replaced by a folder: its files are others
    if not stat.S_ISREG(info.st_mode):
        return "a special file (pipe, socket or device), not diffed"
    if not os.access(os.path.join(os.fsencode(worktree), raw), os.R_OK):
        return "unreadable, not diffed"
    if info.st_size > MAX_DIFF_FILE:
        return f"{info.st_size} bytes{LARGE}"
    return None


@dataclass(frozen=True)
class DiffRecord:
    """How ``workspace.diff`` came out: ``ok``, ``truncated`` or ``failed``."""

    status: str
    detail: str = ""
    skipped: dict[str, str] = field(default_factory=dict)
    bytes: int = 0

    def as_json(self) -> dict[str, object]:
        return {
            "status": self.status,
            "detail": self.detail,
            "skipped": self.skipped,
            "bytes": self.bytes,
        }


def write_diff(workspace: Path, baseline: str, dest: Path) -> DiffRecord:
    """Write the change since ``baseline`` (untracked files included) to ``dest``.

    Never raises for what the workspace holds: a diff that cannot be computed is
    written as a one-line note and returned as ``failed``.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-diff-") as tmp:
        try:
            gitdir = ensure_private(workspace)
            staged = stage(gitdir, workspace, baseline, Path(tmp) / "index")
            return _diff_to(gitdir, workspace, baseline, staged, dest)
        except (InfraError, OSError, subprocess.TimeoutExpired) as exc:
            text = exc.one_line() if isinstance(exc, InfraError) else f"{type(exc).__name__}"
            dest.write_text(f"# workspace.diff could not be computed: {text}\n")
            return DiffRecord("failed", text)


def _diff_to(gitdir: Path, worktree: Path, baseline: str, staged: Staged, dest: Path) -> DiffRecord:
    cmd = _cmd(gitdir)
    args = ["diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv", baseline, "--"]
    written, truncated = 0, False
    with dest.open("wb") as out:
        proc = subprocess.Popen(
            [*cmd, *args],
            cwd=worktree,
            env=_env(gitdir, worktree, staged.index),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):  # type: ignore[union-attr]
            room = MAX_DIFF_BYTES - written
            out.write(chunk[:room])
            written += min(len(chunk), room)
            if len(chunk) > room:
                truncated = True
                proc.kill()
                break
        proc.stdout.close()
        code = proc.wait(timeout=600)
    if truncated:
        return DiffRecord(
            "truncated", f"stopped at {MAX_DIFF_BYTES} bytes", staged.skipped, written
        )
    if code != 0:
        return DiffRecord("failed", f"git diff exited {code}", staged.skipped, written)
    return DiffRecord("ok", "", staged.skipped, written)


def changed(gitdir: Path, worktree: Path, baseline: str) -> list[str]:
    """Files that differ from ``baseline`` in ``worktree``: staged through a throwaway
    index with ``gitdir``'s settings; skipped paths count as changed."""
    with tempfile.TemporaryDirectory(prefix="harness-changed-") as tmp:
        staged = stage(gitdir, worktree, baseline, Path(tmp) / "index")
        out = run(
            gitdir,
            ["diff", "--cached", "--name-only", "-z", "--no-renames", baseline, "--"],
            worktree=worktree,
            index=staged.index,
        ).stdout
    names = {name(p) for p in _split(out)} | set(staged.skipped) | git_blind(worktree)
    return sorted(names)


def changed_lines(gitdir: Path, worktree: Path, baseline: str) -> dict[str, set[int]]:
    """Each changed file's added or rewritten lines (numbered in the work tree's file),
    staged as ``changed`` stages them; a removed file is left out."""
    with tempfile.TemporaryDirectory(prefix="harness-changed-") as tmp:
        staged = stage(gitdir, worktree, baseline, Path(tmp) / "index")
        out = run(
            gitdir,
            [
                "diff",
                "--cached",
                "-U0",
                "--no-renames",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                baseline,
                "--",
            ],
            worktree=worktree,
            index=staged.index,
        ).stdout
    lines: dict[str, set[int]] = {}
    current: set[int] | None = None
    for raw in out.splitlines():
        if raw.startswith(b"+++ "):
            path = raw[4:]
            current = None if path == b"/dev/null" else lines.setdefault(name(path[2:]), set())
        elif raw.startswith(b"@@ ") and current is not None:
            new_side = raw.split(b" ")[2].lstrip(b"+")
            start, _, count = new_side.partition(b",")
            first, n = int(start), int(count or b"1")
            current.update(range(first, first + n))
    return {path: found for path, found in lines.items() if found}


def git_blind(worktree: Path) -> set[str]:
    """Folders git never looks into (any ``.git`` but the top one, in any case, such
    as ``sub/.GIT/``): named, so the rules see them as changes."""
    found: set[str] = set()
    top = os.fsencode(worktree)
    for folder, dirs, _ in walk(top):
        for d in list(dirs):
            if d.lower() == b".git":
                dirs.remove(d)
                rel = os.path.relpath(os.path.join(folder, d), top)
                if rel != b".git":
                    found.add(name(rel) + "/")
    return found


def skipped_lines(skipped: dict[str, str]) -> Iterable[str]:
    return (f"{path}: {why}" for path, why in sorted(skipped.items()))
