"""A Python project's declared requirements, read statically (nothing is built or run)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from harness.util import bounded

TEST_EXTRAS = ("test", "tests", "testing")


def project_requirements(
    pyproject: str | None, setup_py: str | None
) -> tuple[list[str], list[str]]:
    """The project's own (runtime, test) requirements, read statically (no build):
    pyproject's ``[project] dependencies`` and its test extras, else setup.py's literal
    ``install_requires`` and ``tests_require`` (a list, or a module-level name bound to one)."""
    out: list[str] = []
    tests: list[str] = []
    if pyproject:
        project = (bounded.toml(pyproject) or {}).get("project") or {}
        out += [str(d) for d in project.get("dependencies") or []]
        extras = project.get("optional-dependencies") or {}
        for name in TEST_EXTRAS:
            tests += [str(d) for d in extras.get(name) or []]
    if not (out or tests) and setup_py:
        out = _setup_py_requirements(setup_py, "install_requires")
        tests = _setup_py_requirements(setup_py, "tests_require")
    return out, tests


def _setup_py_requirements(text: str, keyword: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    continue
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    names[target.id] = value
    out: list[str] = []
    for found in ast.walk(tree):
        if isinstance(found, ast.keyword) and found.arg == keyword:
            if isinstance(found.value, ast.Name):
                out += names.get(found.value.id, [])
            else:
                try:
                    value = ast.literal_eval(found.value)
                except ValueError:
                    continue
                if isinstance(value, list):
                    out += [str(v) for v in value]
    return out


def requirement_names(tree: Path) -> set[str]:
    """Normalised distribution names a tree declares (requirements files and project)."""
    lines: list[str] = []
    for req in sorted(tree.glob("requirements*.txt")):
        lines += req.read_text(errors="replace").splitlines()
    pyproject, setup_py = tree / "pyproject.toml", tree / "setup.py"
    runtime, tests = project_requirements(
        pyproject.read_text(errors="replace") if pyproject.is_file() else None,
        setup_py.read_text(errors="replace") if setup_py.is_file() else None,
    )
    names: set[str] = set()
    for line in lines + runtime + tests:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if m and not line.lstrip().startswith(("#", "-")):
            names.add(re.sub(r"[-_.]+", "_", m.group(1)).lower())
    return names


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def declared_elsewhere(pyproject: str | None) -> list[str]:
    """Requirements pyproject declares outside ``dependencies`` and the test extras:
    every other extra and every dependency group (PEP 735; includes are skipped)."""
    if not pyproject:
        return []
    data = bounded.toml(pyproject)  # too deep or too large: malformed, as any broken file
    if data is None:
        return []
    out: list[str] = []
    extras = (data.get("project") or {}).get("optional-dependencies") or {}
    groups = data.get("dependency-groups") or {}
    for table in (extras, groups):
        for values in table.values() if isinstance(table, dict) else ():
            out += [str(v) for v in values or [] if isinstance(v, str)]
    return out


def imported_modules(sources: list[str]) -> set[str]:
    """The top-level modules Python sources import (normalised), read with ``ast``."""
    found: set[str] = set()
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {_norm(a.name.split(".")[0]) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(_norm(node.module.split(".")[0]))
    return found


def imported_by_tests(pyproject: str | None, test_sources: list[str]) -> list[str]:
    """Requirements the test files import and the project declares somewhere (an extra
    such as ``dev``, a dependency group): the test extras alone miss them."""
    wanted = imported_modules(test_sources)
    out = []
    for req in declared_elsewhere(pyproject):
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m and _norm(m.group(1)) in wanted and req not in out:
            out.append(req)
    return out
