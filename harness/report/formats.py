"""``harness report --format``: the output formats, one registry (``harness.util.registry``).

Each format is a function ``(tables, generated_at, include_tokens) -> None`` that writes
the era tables to standard output (``include_tokens``: ``--include-tokens``). Add one
with an entry in ``BUILTIN`` (``name: "module:function"``), an entry point in the
``harness.report_formats`` group, or ``REPORT_FORMATS.register``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from rich.console import Console

from harness.report.gabcsv import gab_csv
from harness.report.render import print_tables, to_json, to_markdown
from harness.report.summary import EraTable
from harness.util.registry import Registry

Emit = Callable[[list[EraTable], str, bool], None]

BUILTIN: dict[str, str] = {
    "table": "harness.report.formats:emit_table",
    "csv": "harness.report.formats:emit_csv",
    "json": "harness.report.formats:emit_json",
    "md": "harness.report.formats:emit_markdown",
}
REPORT_FORMATS: Registry[Emit] = Registry(
    "format", "harness.report_formats", BUILTIN, field="--format"
)


def emit_table(tables: list[EraTable], generated_at: str, include_tokens: bool = False) -> None:
    """A rich table per era (at its natural width when not on a terminal: nothing cut)."""
    print_tables(tables, Console(), include_tokens)


def emit_csv(tables: list[EraTable], generated_at: str, include_tokens: bool = False) -> None:
    """goagentbench's report CSV: one row per agent and model (``report.gabcsv``)."""
    sys.stdout.write(gab_csv([r for t in tables for r in t.runs], include_tokens))


def emit_json(tables: list[EraTable], generated_at: str, include_tokens: bool = True) -> None:
    """The eras and their entrants as one JSON document (tokens always in it)."""
    sys.stdout.write(to_json(tables, generated_at))


def emit_markdown(tables: list[EraTable], generated_at: str, include_tokens: bool = False) -> None:
    """A Markdown table per era."""
    sys.stdout.write(to_markdown(tables, include_tokens))


__all__ = ["BUILTIN", "REPORT_FORMATS", "Emit"]
