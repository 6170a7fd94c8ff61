"""The type stubs (more_itertools/*.pyi) describe both functions; both are exported."""

import ast
from pathlib import Path

import more_itertools

PACKAGE = Path(more_itertools.__file__).resolve().parent


def _functions():
    found = {}
    for stub in sorted(PACKAGE.glob("*.pyi")):
        tree = ast.parse(stub.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = [a.arg for a in node.args.args]
    return found


def test_stub_for_constrained_batches():
    assert _functions().get("constrained_batches") == [
        "iterable",
        "max_size",
        "max_count",
        "get_len",
        "strict",
    ]


def test_stub_for_new_batched():
    assert _functions().get("batched") == ["iterable", "n"]


def test_star_import_exports_both():
    namespace: dict[str, object] = {}
    exec("from more_itertools import *", namespace)
    assert "batched" in namespace
    assert "constrained_batches" in namespace
    assert namespace["batched"] is not namespace["constrained_batches"]
