"""The test mirror: every module of ``harness/`` with logic has a test file named after it.

``harness/<pkg>/<module>.py`` is tested in ``tests/<pkg>/test_<module>.py``; a package's
``__init__.py`` in ``test_init.py`` beside it, a ``__main__.py`` in ``test_main.py``.
A module has logic when it defines a function or a method with a body (a module-level
``__getattr__`` or ``__dir__`` that resolves lazy re-exports does not count, nor a
protocol's stub: a docstring and ``...``): re-exports, constants, data shapes and
protocols need no file of their own.

``EXEMPT`` names the modules with logic that need no test file of their own, each with
its reason. It may only shrink: an entry whose module gained its test, lost its logic or
is gone fails here until it is removed.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
LAZY = {"__getattr__", "__dir__"}  # a package's lazy re-exports, no logic of its own

EXEMPT: dict[str, str] = {
    "harness/testing/lmstudio/__main__.py": (
        "the look-alike host's command line (argument parsing, then serve): started as a "
        "process by tests/testing/lmstudio/test_host.py"
    ),
    "harness/gateway/inside.py": (
        "the gateway's entry point inside its container (argument parsing, then serve): "
        "started by every Docker gateway test (tests/backends/docker/test_gateway.py)"
    ),
}


def mirrored(module: Path) -> Path:
    """Where the test of ``harness/…/<module>.py`` lives."""
    rel = module.relative_to(ROOT / "harness")
    stem = {"__init__": "init", "__main__": "main"}.get(rel.stem, rel.stem)
    return ROOT / "tests" / rel.parent / f"test_{stem}.py"


def is_stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of a docstring, ``...`` or ``pass`` only (a protocol's method)."""
    return all(
        isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in function.body
    )


def has_logic(module: Path) -> bool:
    """A function or a method with a body anywhere in ``module``, lazy re-export hooks
    and protocol stubs aside."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    lazy = {id(n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in LAZY}
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and id(node) not in lazy
        and not is_stub(node)
        for node in ast.walk(tree)
    )


def modules() -> list[Path]:
    return sorted((ROOT / "harness").rglob("*.py"))


def name(module: Path) -> str:
    return module.relative_to(ROOT).as_posix()


def test_every_module_with_logic_has_its_mirrored_test() -> None:
    missing = [
        f"{name(m)}: no {mirrored(m).relative_to(ROOT).as_posix()}"
        for m in modules()
        if has_logic(m) and not mirrored(m).is_file() and name(m) not in EXEMPT
    ]
    assert not missing, "\n".join(missing)


def test_the_exemptions_only_name_modules_still_without_their_test() -> None:
    stale = []
    for entry in sorted(EXEMPT):
        module = ROOT / entry
        if not module.is_file():
            stale.append(f"{entry}: gone")
        elif mirrored(module).is_file():
            stale.append(f"{entry}: has {mirrored(module).relative_to(ROOT)}; take it off")
        elif not has_logic(module):
            stale.append(f"{entry}: has no logic; take it off")
    assert not stale, "\n".join(stale)


def test_the_rule_sees_logic_and_lazy_re_exports(tmp_path: Path) -> None:
    lazy = tmp_path / "lazy.py"
    lazy.write_text("from x import y\nA = 1\ndef __getattr__(n):\n    return n\n")
    assert not has_logic(lazy)
    shape = tmp_path / "shape.py"
    shape.write_text("class Row:\n    a: int = 0\n")
    assert not has_logic(shape)
    method = tmp_path / "method.py"
    method.write_text("class Row:\n    def total(self):\n        return 1\n")
    assert has_logic(method)
    nested = tmp_path / "nested.py"
    nested.write_text("class P:\n    def __getattr__(self, n):\n        return n\n")
    assert has_logic(nested)  # only a module's own hook is a re-export
    protocol = tmp_path / "protocol.py"
    protocol.write_text(
        'class P(Protocol):\n    def run(self) -> int:\n        """Doc."""\n        ...\n'
    )
    assert not has_logic(protocol)
    assert mirrored(ROOT / "harness/verify/python/__init__.py") == (
        ROOT / "tests/verify/python/test_init.py"
    )
    assert mirrored(ROOT / "harness/verify/twin.py") == ROOT / "tests/verify/test_twin.py"
