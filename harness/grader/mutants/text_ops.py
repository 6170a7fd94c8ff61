"""Mutation operators for C-like sources (Go, JavaScript), on tokens, never in strings.

No well-kept mutation library covers Go or browser JavaScript from Python, so these are
harness's own: a small lexer finds the code between strings, template literals and
comments, and each operator swaps one token for a near miss, the classic set (a
comparison loosened or flipped, ``&&``/``||``, ``+``/``-``, ``true``/``false``, an integer
one step either way) that a grader must notice. Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

#: What each operator may turn a token into (one mutant per replacement).
SWAPS: dict[str, dict[str, tuple[str, ...]]] = {
    "comparison": {
        "<": ("<=",),
        "<=": ("<",),
        ">": (">=",),
        ">=": (">",),
        "==": ("!=",),
        "!=": ("==",),
        "===": ("!==",),
        "!==": ("===",),
    },
    "logical": {"&&": ("||",), "||": ("&&",)},
    "arithmetic": {"+": ("-",), "-": ("+",), "*": ("/",), "/": ("*",), "%": ("*",)},
    "boolean": {"true": ("false",), "false": ("true",)},
}

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)
  | (?P<number>\b\d+\b(?![.\w]))
  | (?P<word>\b(?:true|false)\b)
  | (?P<op>===|!==|==|!=|<=|>=|&&|\|\||<<|>>|<-|\+\+|--|\+=|-=|\*=|/=|%=|=>|->|:=|[<>+\-*/%])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Site:
    """One place a token operator can change: ``text[start:end]`` becomes ``after``."""

    operator: str
    start: int
    end: int
    before: str
    after: str
    line: int


def sites(text: str) -> Iterator[Site]:
    """Every mutation site of ``text`` in source order (strings and comments skipped)."""
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        token = match.group()
        start, end = match.span()
        line = text.count("\n", 0, start) + 1
        if kind == "number":
            value = int(token)
            for op, new in (("number+1", value + 1), ("number-1", value - 1)):
                if new >= 0:
                    yield Site(op, start, end, token, str(new), line)
            continue
        if kind not in ("word", "op"):
            continue
        if kind == "op" and _unary(text, start):
            continue
        for family, table in SWAPS.items():
            for after in table.get(token, ()):
                yield Site(family, start, end, token, after, line)


def _unary(text: str, start: int) -> bool:
    """A ``-``/``+`` that starts an operand (``x = -1``, ``f(-a)``) is not a binary one."""
    before = text[:start].rstrip()
    return not before or before[-1] in "=(,[{:;!&|?<>+-*/%\n"


def apply(text: str, site: Site) -> str:
    """``text`` with one site changed."""
    return text[: site.start] + site.after + text[site.end :]


__all__ = ["SWAPS", "Site", "apply", "sites"]
