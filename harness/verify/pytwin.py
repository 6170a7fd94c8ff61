"""A Python test file's negative twin, from its syntax tree (``verify.twin``).

What a twin perturbs (every literal leaf of each, numbers by one, strings with a suffix,
a bool flipped; ``twin.perturb``):

- the literal side of an ``==`` comparison in an ``assert`` statement (``assert f(x) ==
  3``, ``assert (1, "a") == g()``, ``assert f(x) == pytest.approx(0.5)``);
- the literal arguments of unittest's equality asserts (``assertEqual``,
  ``assertListEqual``, ``assertDictEqual``, ``assertAlmostEqual``, ...);
- in a ``pytest.mark.parametrize`` table (inline, or a module-level name bound to a
  literal list), the fields whose names the test compares with ``==`` or an
  ``assertEqual``; rows get their original id (``pytest.param(..., id=...)``) so a twin
  test is named as its target test;
- a module-level literal table a test loops over (``for s, want in CASES: assert f(s)
  == want``), the fields compared the same way.

What a twin cannot cover (a forger that reads or fakes only these is not caught by the
twin; outcome parity and the review flags still apply): an expectation computed at run
time (``assert f(x) == g(y)``, a value read from a fixture or a file, a golden snapshot);
assertions other than equality (``!=``, ``<``, ``in``, ``is``, ``isinstance``, a bare
``assert x``); ``pytest.raises`` and its ``match``; mock call assertions; an equality
checked in a helper function the test calls; ``None`` and non-literal constants (an
enum member, a class); a test whose perturbed assertion the reference never reaches
(measured: it is left out).

The rewrite edits the source text at the nodes' positions: every other byte (and line
number) of the file stays as it was.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.verify.twin import perturb

EQUAL_ASSERTS = frozenset(
    {
        "assertEqual",
        "assertEquals",
        "assertListEqual",
        "assertTupleEqual",
        "assertDictEqual",
        "assertSetEqual",
        "assertSequenceEqual",
        "assertMultiLineEqual",
        "assertCountEqual",
        "assertAlmostEqual",
        "assertAlmostEquals",
        "failUnlessEqual",
    }
)
MAX_SOURCE = 2 * 1024 * 1024
PARAM = "__import__('pytest').param"
PRINTABLE = re.compile(r"^[\x20-\x7e]*$")


@dataclass
class _Edits:
    """Byte-offset edits of one source: (start, end, text), non-overlapping."""

    lines: list[int]  # byte offset of each line's start
    edits: list[tuple[int, int, str]] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)  # ids of nodes already perturbed

    def at(self, line: int, col: int) -> int:
        return self.lines[line - 1] + col

    def replace(self, node: ast.AST, text: str) -> None:
        start = self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        self.edits.append((start, end, text))

    def insert(self, line: int, col: int, text: str) -> None:
        pos = self.at(line, col)
        self.edits.append((pos, pos, text))


def _literal(node: ast.AST) -> tuple[bool, object]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _perturb_node(node: ast.AST, edits: _Edits) -> bool:
    """Perturb every literal leaf under ``node``; True when any changed."""
    if id(node) in edits.seen:
        return True
    if isinstance(node, ast.Constant) or (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub | ast.UAdd)
        and isinstance(node.operand, ast.Constant)
    ):
        ok, value = _literal(node)
        if not ok:
            return False
        changed, new = perturb(value)
        if changed:
            edits.replace(node, repr(new))
            edits.seen.add(id(node))
        return changed
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any([_perturb_node(e, edits) for e in node.elts])
    if isinstance(node, ast.Dict):
        return any([_perturb_node(v, edits) for v in node.values if v is not None])
    if _is_approx(node):
        assert isinstance(node, ast.Call)
        return bool(node.args) and _perturb_node(node.args[0], edits)
    return False


def _is_approx(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "approx"


def _is_literal_side(node: ast.AST) -> bool:
    return _literal(node)[0] or _is_approx(node)


def _compared(func: ast.AST) -> tuple[list[tuple[ast.AST, ast.AST]], set[str]]:
    """The (literal side, other side) pairs of equality checks in ``func`` and the bare
    names it compares."""
    pairs: list[tuple[ast.AST, ast.AST]] = []
    names: set[str] = set()

    def sides(a: ast.AST, b: ast.AST) -> None:
        la, lb = _is_literal_side(a), _is_literal_side(b)
        if la and not lb:
            pairs.append((a, b))
        elif lb and not la:
            pairs.append((b, a))
        for side, lit in ((a, la), (b, lb)):
            if isinstance(side, ast.Name) and not lit:
                names.add(side.id)

    for node in ast.walk(func):
        if isinstance(node, ast.Assert):
            for cmp in ast.walk(node.test):
                if not isinstance(cmp, ast.Compare):
                    continue
                operands = [cmp.left, *cmp.comparators]
                for i, op in enumerate(cmp.ops):
                    if isinstance(op, ast.Eq):
                        sides(operands[i], operands[i + 1])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in EQUAL_ASSERTS
        ):
            args = list(node.args[:2])
            kw = {k.arg: k.value for k in node.keywords if k.arg in ("first", "second")}
            args += [kw[k] for k in ("first", "second") if k in kw]
            if len(args) == 2:
                sides(args[0], args[1])
    return pairs, names


def _argnames(node: ast.AST) -> list[str] | None:
    ok, value = _literal(node)
    if not ok:
        return None
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return [str(v).strip() for v in value]
    return None


def _parametrize(deco: ast.AST) -> ast.Call | None:
    if not isinstance(deco, ast.Call):
        return None
    func = deco.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return deco if name == "parametrize" and len(deco.args) >= 2 else None


def _id_part(value: object, argname: str, idx: int) -> str | None:
    """pytest's id for one original value (None: not reproducible here)."""
    if isinstance(value, str):
        escaped = value.encode("unicode_escape").decode("ascii")
        return escaped if value and PRINTABLE.match(escaped) else None
    if value is None or isinstance(value, bool | int | float | complex):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return None
    return f"{argname}{idx}"


def _row_values(row: ast.AST, width: int) -> tuple[list[ast.AST], ast.Call | None] | None:
    """A row's value nodes, and its ``pytest.param`` call when it is one without an id."""
    call = None
    func = row.func if isinstance(row, ast.Call) else None
    if func is not None and getattr(func, "attr", getattr(func, "id", "")) == "param":
        assert isinstance(row, ast.Call)
        if any(isinstance(a, ast.Starred) for a in row.args):
            return None
        values: list[ast.AST] = list(row.args)
        call = None if any(k.arg == "id" for k in row.keywords) else row
    elif width == 1:
        values = [row]
    elif isinstance(row, ast.Tuple | ast.List):
        values = list(row.elts)
    else:
        return None
    if len(values) != width:
        return None
    return values, call


def _table_rows(node: ast.AST, module: dict[str, ast.AST]) -> list[ast.AST] | None:
    if isinstance(node, ast.Name):
        node = module.get(node.id, node)
    if isinstance(node, ast.List | ast.Tuple):
        return list(node.elts)
    return None


def _table(
    rows: list[ast.AST], argnames: list[str], wanted: set[str], edits: _Edits, with_ids: bool
) -> bool:
    """Perturb the ``wanted`` fields of a parametrize table; rows keep their ids."""
    positions = [i for i, n in enumerate(argnames) if n in wanted]
    if not positions:
        return False
    plans: list[tuple[ast.AST, list[ast.AST], ast.Call | None, str | None]] = []
    for idx, row in enumerate(rows):
        shaped = _row_values(row, len(argnames))
        if shaped is None:
            continue
        values, call = shaped
        parts = []
        for name, node in zip(argnames, values, strict=False):
            ok, value = _literal(node)
            parts.append(_id_part(value, name, idx) if ok else f"{name}{idx}")
        ident = "-".join(p for p in parts if p is not None) if None not in parts else None
        plans.append((row, values, call, ident))
    idents = [p[3] for p in plans]
    unique = len(set(idents)) == len(idents) and None not in idents
    changed = False
    for row, values, call, ident in plans:
        row_changed = any([_perturb_node(values[i], edits) for i in positions if i < len(values)])
        changed |= row_changed
        if not (row_changed and with_ids and unique and ident is not None):
            continue
        if isinstance(row, ast.Call):
            if call is None:
                continue  # it has an id of its own
            end = edits.at(row.end_lineno, row.end_col_offset) - 1  # type: ignore[arg-type]
            edits.edits.append((end, end, f", id={ident!r}"))
        elif len(argnames) == 1:
            edits.insert(row.lineno, row.col_offset, f"{PARAM}(")  # type: ignore[attr-defined]
            edits.insert(row.end_lineno, row.end_col_offset, f", id={ident!r})")  # type: ignore[attr-defined]
        else:
            edits.insert(row.lineno, row.col_offset, f"{PARAM}(*")  # type: ignore[attr-defined]
            edits.insert(row.end_lineno, row.end_col_offset, f", id={ident!r})")  # type: ignore[attr-defined]
    return changed


def _loops(func: ast.AST, wanted: set[str], module: dict[str, ast.AST], edits: _Edits) -> bool:
    """``for a, want in TABLE:`` over a module-level literal table: its compared fields."""
    changed = False
    for node in ast.walk(func):
        if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Name):
            continue
        target = node.target
        names = (
            [t.id if isinstance(t, ast.Name) else "" for t in target.elts]
            if isinstance(target, ast.Tuple)
            else [target.id]
            if isinstance(target, ast.Name)
            else []
        )
        rows = _table_rows(node.iter, module)
        if rows is None or not names:
            continue
        changed |= _table(rows, names, wanted, edits, with_ids=False)
    return changed


def twin_source(source: bytes) -> bytes | None:
    """The twin of a Python test file, or None when nothing in it can be perturbed (or
    it does not parse, or is too large)."""
    if len(source) > MAX_SOURCE:
        return None
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    edits = _Edits(offsets)
    tables: dict[str, ast.AST] = {}
    for stmt in module.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                tables[target.id] = stmt.value
    changed = False
    for func in ast.walk(module):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        pairs, names = _compared(func)
        for literal, _ in pairs:
            changed |= _perturb_node(literal, edits)
        for deco in func.decorator_list:
            call = _parametrize(deco)
            if call is None:
                continue
            argnames = _argnames(call.args[0])
            rows = _table_rows(call.args[1], tables)
            if argnames is None or rows is None:
                continue
            with_ids = not any(k.arg == "ids" for k in call.keywords)
            changed |= _table(rows, argnames, names, edits, with_ids)
        changed |= _loops(func, names, tables, edits)
    if not changed:
        return None
    return _apply(source, edits.edits)


def _apply(source: bytes, edits: Iterable[tuple[int, int, str]]) -> bytes:
    out = source
    # from the end, so earlier offsets hold; at one offset a replacement is applied
    # before an insertion there, which so lands in front of it
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1] > e[0]), reverse=True):
        out = out[:start] + text.encode() + out[end:]
    return out
