"""Mutation operators for Python: cosmic-ray's core set plus the mistakes apps make.

cosmic-ray (a well-kept mutation library, parso-based) gives the classic operators:
comparisons, binary, unary and boolean operators, numbers one step either way, ``break``
and ``continue``, removed decorators, loops that never run. Harness adds operators
written as cosmic-ray operators for what app authors get wrong and no classic operator
makes: a float bound moved ten per cent either way (a timeout, a backoff factor), a call
statement removed (a commit, a save, a flush), an SQL clause changed inside its string
(an ``ORDER BY`` dropped, ``ASC``/``DESC`` swapped, ``OR IGNORE``/``OR REPLACE`` swapped,
a bound loosened), state kept in memory (``:memory:`` for a database file) and a
transaction split in two (a commit between the first two statements of a ``with``
block). Pure: source text in, source text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import parso
import parso.python.tree as pytree
from cosmic_ray.ast import ast_nodes, get_ast
from cosmic_ray.mutating import mutate_code
from cosmic_ray.operators.operator import Example, Operator
from cosmic_ray.plugins import get_operator, operator_names

#: Core operators left out: they need arguments (variable replacement/insertion) or
#: rename exceptions to a class the mutated module does not define.
_SKIPPED = {"core/ExceptionReplacer", "core/VariableReplacer", "core/VariableInserter"}


class FloatNudge(Operator):  # type: ignore[misc]
    """A float constant moved ten per cent down or up: a bound just across the SPEC's."""

    FACTORS = (0.9, 1.1)

    def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
        if isinstance(node, pytree.Number) and _is_float(node.value) and _nonzero(node.value):
            for _ in self.FACTORS:
                yield node.start_pos, node.end_pos

    def mutate(self, node: Any, index: int) -> Any:
        value = float(node.value.replace("_", "")) * self.FACTORS[index]
        return pytree.Number(
            f"{value:.6g}" if "." in f"{value:.6g}" else f"{value:.1f}", node.start_pos, node.prefix
        )

    @classmethod
    def examples(cls) -> tuple[Any, ...]:
        return (Example("x = 2.0", "x = 1.8"), Example("x = 2.0", "x = 2.2", occurrence=1))


class DropCall(Operator):  # type: ignore[misc]
    """A statement that is only a call (``conn.commit()``, ``self.save()``) removed."""

    def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
        if _call_statement(node) is not None:
            yield node.start_pos, node.end_pos

    def mutate(self, node: Any, index: int) -> Any:
        call = _call_statement(node)
        assert call is not None
        node.children[0] = pytree.Keyword("pass", call.start_pos, call.get_first_leaf().prefix)
        return node

    @classmethod
    def examples(cls) -> tuple[Any, ...]:
        return (Example("conn.commit()\n", "pass\n"),)


#: SQL edits inside a string literal: (name, pattern, replacement).
SQL_EDITS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "order-dropped",
        re.compile(r"\s+ORDER\s+BY\s+[\w.,\s]+?(?=\s+LIMIT\b|\s+OFFSET\b|\)|['\"]|$)", re.I),
        "",
    ),
    ("asc-desc", re.compile(r"\bASC\b", re.I), "DESC"),
    ("desc-asc", re.compile(r"\bDESC\b", re.I), "ASC"),
    ("ignore-replace", re.compile(r"\bOR\s+IGNORE\b", re.I), "OR REPLACE"),
    ("replace-ignore", re.compile(r"\bOR\s+REPLACE\b", re.I), "OR IGNORE"),
    ("bound-loosened", re.compile(r"(?<=\s)<(?=\s)"), "<="),
    ("bound-tightened", re.compile(r"(?<=\s)<=(?=\s)"), "<"),
    ("unique-dropped", re.compile(r"\s+UNIQUE\b", re.I), ""),
)
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE\s+TABLE)\b", re.I)


class SqlClause(Operator):  # type: ignore[misc]
    """One SQL clause changed inside a string literal (the query the app sends)."""

    def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
        for _ in _sql_edits(node):
            yield node.start_pos, node.end_pos

    def mutate(self, node: Any, index: int) -> Any:
        _, pattern, replacement = list(_sql_edits(node))[index]
        node.value = pattern.sub(replacement, node.value, count=1)
        return node

    @classmethod
    def examples(cls) -> tuple[Any, ...]:
        return (Example("q = 'SELECT a FROM t ORDER BY a'", "q = 'SELECT a FROM t'"),)


class MemoryState(Operator):  # type: ignore[misc]
    """A database file name replaced by ``:memory:``: the state dies with the process."""

    SUFFIX = re.compile(r"""^[rbuRBU]*(['"])[^'"]*\.(db|sqlite3?)\1$""")

    def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
        if isinstance(node, pytree.String) and self.SUFFIX.match(node.value):
            yield node.start_pos, node.end_pos

    def mutate(self, node: Any, index: int) -> Any:
        node.value = '":memory:"'
        return node

    @classmethod
    def examples(cls) -> tuple[Any, ...]:
        return (Example("path = 'app.db'", 'path = ":memory:"'),)


class SplitTransaction(Operator):  # type: ignore[misc]
    """A transaction split in two: a commit between its first two statements.

    Two shapes: ``X.execute("BEGIN...")`` followed by two statements or more (a
    ``COMMIT`` and a new ``BEGIN`` go after the first), and a ``with`` block over a
    database connection (a name holding ``db`` or ``conn``; sqlite3's connection
    commits when the block ends) holding two statements or more (``X.commit()`` goes
    after the first)."""

    def mutation_positions(self, node: Any) -> Iterator[tuple[Any, Any]]:
        if _split_point(node) is not None:
            yield node.start_pos, node.end_pos

    def mutate(self, node: Any, index: int) -> Any:
        found = _split_point(node)
        assert found is not None
        code, suite, at = found
        indent = suite.children[at].get_first_leaf().prefix.rsplit("\n", 1)[-1]
        stmt = parso.parse(code + "\n").children[0]  # type: ignore[no-untyped-call]
        stmt.get_first_leaf().prefix = indent
        stmt.parent = suite
        suite.children.insert(at + 1, stmt)
        return node

    @classmethod
    def examples(cls) -> tuple[Any, ...]:
        return (
            Example(
                "with db:\n    a()\n    b()\n",
                "with db:\n    a()\n    db.commit()\n    b()\n",
            ),
            Example(
                "def f():\n    d.execute('BEGIN')\n    a()\n    b()\n",
                "def f():\n    d.execute('BEGIN')\n    a()\n"
                "    d.execute('COMMIT'); d.execute('BEGIN')\n    b()\n",
            ),
        )


HARNESS_OPERATORS: dict[str, type[Operator]] = {
    "harness/FloatNudge": FloatNudge,
    "harness/DropCall": DropCall,
    "harness/SqlClause": SqlClause,
    "harness/MemoryState": MemoryState,
    "harness/SplitTransaction": SplitTransaction,
}


@cache
def operators() -> tuple[tuple[str, Operator], ...]:
    """Every operator used, by name: cosmic-ray's core ones, then harness's."""
    core = [
        (name, get_operator(name)())
        for name in operator_names()
        if name.startswith("core/") and name not in _SKIPPED and not get_operator(name).arguments()
    ]
    return (*core, *((name, cls()) for name, cls in HARNESS_OPERATORS.items()))


@dataclass(frozen=True)
class Site:
    """The ``occurrence``-th place ``operator`` can change in a module, on ``line``."""

    operator: str
    occurrence: int
    line: int


def sites(source: str, lines: set[int] | None = None) -> Iterator[Site]:
    """Every mutation site of ``source`` (only those starting on ``lines`` when given)."""
    nodes = list(ast_nodes(get_ast(source)))
    for name, operator in operators():
        occurrence = 0
        for node in nodes:
            for start, _ in operator.mutation_positions(node):
                if lines is None or start[0] in lines:
                    yield Site(name, occurrence, start[0])
                occurrence += 1


def apply(source: str, site: Site) -> str | None:
    """``source`` with one site mutated; None when the operator found nothing there."""
    operator = dict(operators())[site.operator]
    mutated = mutate_code(source, operator, site.occurrence)
    return None if mutated is None or mutated == source else str(mutated)


def _is_float(text: str) -> bool:
    low = text.lower()
    return not low.startswith(("0x", "0o", "0b")) and ("." in low or "e" in low) and "j" not in low


def _nonzero(text: str) -> bool:
    return float(text.replace("_", "")) != 0.0


def _call_statement(node: Any) -> Any:
    """The call of a simple statement that is one call and nothing else, else None."""
    if node.type != "simple_stmt" or len(node.children) != 2:
        return None
    expr = node.children[0]
    if expr.type not in ("atom_expr", "power"):
        return None
    last = expr.children[-1]
    is_call = last.type == "trailer" and last.children[0].value == "("
    return expr if is_call else None


def _sql_edits(node: Any) -> Iterator[tuple[str, re.Pattern[str], str]]:
    if not isinstance(node, pytree.String) or not _SQL.search(node.value):
        return
    for edit in SQL_EDITS:
        if edit[1].search(node.value):
            yield edit


def _split_point(node: Any) -> tuple[str, Any, int] | None:
    """(the statement to insert, the block, the index it goes after) of a transaction
    that holds two statements or more."""
    if node.type == "with_stmt":
        items = [c for c in node.children[1:-2] if c.type in ("name", "atom_expr")]
        conns = [i.get_code().strip() for i in items if _CONN.search(i.get_code())]
        suite = node.children[-1]
        body = _statements(suite)
        if conns and len(body) >= 2:
            return f"{conns[-1]}.commit()", suite, body[0]
        return None
    if node.type != "suite":
        return None
    body = _statements(node)
    for n, i in enumerate(body[:-2]):
        receiver = _begin_receiver(node.children[i])
        if receiver is not None:
            return (
                f"{receiver}.execute('COMMIT'); {receiver}.execute('BEGIN')",
                node,
                body[n + 1],
            )
    return None


_CONN = re.compile(r"(db|conn)\w*\s*$", re.I)
_BEGIN = re.compile(r"""^[rbuRBU]*['"]BEGIN\b""", re.I)


def _statements(suite: Any) -> list[int]:
    return [i for i, c in enumerate(suite.children) if c.type != "newline"]


def _begin_receiver(stmt: Any) -> str | None:
    """``X`` of a statement ``X.execute("BEGIN ...")``."""
    call = _call_statement(stmt)
    if call is None or len(call.children) < 3:
        return None
    method, args = call.children[-2], call.children[-1]
    if method.get_code().strip() != ".execute":
        return None
    first = args.children[1] if len(args.children) > 2 else None
    if first is None or first.type != "string" or not _BEGIN.match(first.value):
        return None
    return "".join(c.get_code() for c in call.children[:-2]).strip()


__all__ = ["HARNESS_OPERATORS", "Site", "apply", "operators", "sites"]
