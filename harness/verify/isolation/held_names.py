"""Refuse test results that name tests the hidden suite does not hold.

After restoration (``verify.isolation.restore``) the tested folders hold the baseline's and the
hidden tests only; the names they declare are read from the source (pytest: ``test*``
functions and methods, ``Test*`` classes, module-level ``test*`` names; Go: ``Test``,
``Example`` and ``Fuzz`` functions). A parsed result that names anything else, or passes
one test more often than it ran, was not produced by the hidden suite: the target is
rejected (failed, with the reason). Pure functions over source text and results.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable

from harness.verify.outcome import TargetResult, TestCase

GO_DECL = re.compile(r"^func\s+((?:Test|Example|Fuzz)\w*)\s*\(", re.MULTILINE)


def pytest_names(source: str) -> set[str]:
    """Test names a Python file declares (functions, methods, classes, assignments)."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def go_names(source: str) -> set[str]:
    return set(GO_DECL.findall(source))


def held_names(sources: Iterable[str], runner: str) -> set[str]:
    parse = go_names if runner == "go" else pytest_names
    out: set[str] = set()
    for text in sources:
        out |= parse(text)
    return out


def case_names(case: TestCase, runner: str) -> list[str]:
    """The declared names a reported case stands for (each must be held)."""
    if runner == "go":
        return [case.name.split("/", 1)[0]]
    parts = case.name.split("::")
    func = parts[-1].split("[", 1)[0]
    classes = [p.rsplit(".", 1)[-1] for p in parts[:-1]]
    # a class in the classname ("pkg.mod.TestX") is held too; module parts are paths
    return [func, *[c for c in classes[-1:] if c[:1].isupper()]]


def rejection(target: TargetResult, held: set[str], runner: str) -> str | None:
    """Why ``target``'s parsed result cannot come from the hidden suite (None: it can)."""
    real = [c for c in target.tests if not c.synthetic]
    unknown = sorted({n for c in real for n in case_names(c, runner) if n not in held})
    if unknown:
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        return f"result names tests the hidden suite does not hold: {', '.join(unknown[:3])}{more}"
    twice = [n for n, k in Counter(c.name for c in real if c.passed).items() if k > 1]
    if twice and runner != "go":
        return f"result passes a test more often than it ran: {twice[0]}"
    return None


REJECTED = "rejected: "


def reject(target: TargetResult, reason: str) -> TargetResult:
    """The target as failed, for ``reason``: every parsed case counts as failed (its
    names kept for the record), none of its passes is credited."""
    failed = [c.model_copy(update={"passed": False, "error": "rejected"}) for c in target.tests]
    return target.model_copy(update={"error": REJECTED + reason, "ok": False, "tests": failed})


def rejected_for(target: TargetResult) -> str | None:
    """Why ``reject`` refused ``target`` already (a runner may, e.g. the canary), or None."""
    error = target.error or ""
    return error.removeprefix(REJECTED) if error.startswith(REJECTED) else None
