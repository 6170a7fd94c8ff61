"""Tell a broken environment from broken code in a test command's output.

A toolchain too old for go.mod, a module the offline cache lacks, a missing pytest: these
fail every tree the same way, the untouched baseline included, and are the harness's
problem (outcome ``error``), never the agent's. ``classify_*`` name such a failure with its
fix; the engine then confirms it on the baseline before calling it an environment error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.provision.pyreqs import requirement_names

GO_FIX = (
    'declare environment.go: "1.24" (any pinned release 1.21-1.27) or let harness pick it '
    "from go.mod; check with `harness validate --deep SCENARIO`"
)
DEPS_FIX = (
    "let `harness setup` prepare the dependencies (it needs the module proxy or package "
    "index once), and check with `harness validate --deep SCENARIO`"
)


def module_path(tree: Path) -> str | None:
    go_mod = tree / "go.mod"
    if not go_mod.is_file():
        return None
    for line in go_mod.read_text(errors="replace").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "module":
            return words[1].strip('"')
    return None


def go_text(output: str) -> str:
    """``go test -json`` output as go would print it: each event's ``Output`` (build
    errors of go 1.24+ come as ``build-output`` events), other lines as they are."""
    lines: list[str] = []
    for line in output.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            lines.append(line)
            continue
        if isinstance(event, dict) and isinstance(event.get("Output"), str):
            lines.append(event["Output"].rstrip("\n"))
        elif not isinstance(event, dict):
            lines.append(line)
    return "\n".join(lines)


def classify_go(output: str, tree: Path, *, modcache: str | None = None) -> str | None:
    """The environment failure in ``go test`` output, with its fix; None if none.

    ``modcache`` is the prepared module cache the tests read (read-only to them): go
    trying to write there means the build needs a module that was not prepared, which
    the test user's go reports as "permission denied", not as a lookup failure."""
    output = go_text(output)
    m = re.search(r"go\.mod requires go >= ?(\S+) \(running go (\S+?)[;)]", output)
    if m:
        return f"toolchain: go.mod requires go {m.group(1)} but Go {m.group(2)} ran (fix: {GO_FIX})"
    m = re.search(r"invalid go version '([^']+)'", output)
    if m:
        return (
            f"toolchain: go.mod's go {m.group(1)} is newer than the Go that ran "
            f"(it cannot parse it) (fix: {GO_FIX})"
        )
    if re.search(r"unknown directive: toolchain|go: command not found|cannot find GOROOT", output):
        return f"toolchain: the Go that ran cannot build this module (fix: {GO_FIX})"
    own = module_path(tree) or "\0"
    for pattern in (
        r"module lookup disabled by GOPROXY=off",
        r"missing go\.sum entry for module providing package ([^\s;]+)",
        r"no required module provides package ([^\s;]+)",
        r"cannot find module providing package ([^\s;:]+)",
        r"dial tcp: lookup \S+",
    ):
        for m in re.finditer(pattern, output):
            start = output.rfind("\n", 0, m.start()) + 1
            line = output[start:].split("\n", 1)[0]
            pkg = m.group(1) if m.groups() else imported_at(line, tree)
            if pkg and (pkg == own or pkg.startswith(own + "/") or "." not in pkg.split("/")[0]):
                continue  # the module's own package, or a stdlib-looking path: the code's
            return f"dependency: {line.strip()[:200]} (fix: {DEPS_FIX})"
    if modcache:
        root = re.escape(modcache.rstrip("/"))
        m = re.search(
            rf"(?:mkdir|open) {root}(?:/\S*)?: (?:permission denied|read-only file system)", output
        )
        if m:
            line = next(ln for ln in output.splitlines() if m.group(0) in ln)
            return (
                "dependency: a module the build needs is not in the prepared module cache "
                f"(go tried to fetch it into the read-only cache: {line.strip()[:200]}) "
                f"(fix: {DEPS_FIX})"
            )
    return None


def imported_at(line: str, tree: Path) -> str:
    """The import path a ``FILE.go:LINE:COL: ...`` error points at ("" if none).

    Go resolves an import the main module lacks by loading the whole module graph, so a
    package the agent never wrote fails offline as "module lookup disabled" on some
    unrelated module: which package was wanted is only in the source at that position."""
    named = re.search(r"providing package ([^\s;:]+)", line)
    if named:
        return named.group(1)
    m = re.match(r"\s*(\S+\.go):(\d+):(\d+): ", line)
    if not m:
        return ""
    try:
        lines = (tree / m.group(1)).read_text(errors="replace").splitlines()
        text = lines[int(m.group(2)) - 1][int(m.group(3)) - 1 :]
    except (OSError, IndexError, ValueError):
        return ""
    q = re.match(r'(?:\w+\s+)?"([^"]+)"', text)
    return q.group(1) if q else ""


def classify_pytest(output: str, tree: Path) -> str | None:
    """The environment failure in pytest output (missing pytest or a declared dependency)."""
    if re.search(r"No module named pytest", output):
        return (
            "toolchain: pytest is not installed for the Python that ran "
            "(fix: use an environment image with pytest)"
        )

    declared = requirement_names(tree)
    for m in re.finditer(r"No module named '([^'.]+)", output):
        if re.sub(r"[-_.]+", "_", m.group(1)).lower() in declared:
            return (
                f"dependency: {m.group(1)} (a declared requirement) is not installed "
                f"(fix: {DEPS_FIX})"
            )
    return None
