"""``report --publish``: a dated summary folder and a marked table in a Markdown file.

The Markdown file keeps everything outside ``<!-- BEGIN_RESULTS -->`` ...
``<!-- END_RESULTS -->`` untouched; the markers must exist (harness never guesses where
a table belongs in someone's README).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from harness.errors import UserError
from harness.report.render import to_csv, to_json, to_markdown
from harness.report.summary import EraTable
from harness.util.fs import write_atomic

BEGIN = "<!-- BEGIN_RESULTS -->"
END = "<!-- END_RESULTS -->"


def refuse_uncalibrated(tables: list[EraTable]) -> None:
    """Published numbers come only from calibrated scorers (no ``-rc`` era)."""
    rc = [t.era for t in tables if t.era.endswith("-rc")]
    if rc:
        raise UserError(
            f"uncalibrated scorer era(s) {', '.join(rc)} cannot be published",
            field="--publish",
            fix="run `harness calibrate SCENARIO` (a new era), or filter with --scenario",
        )


def write_summary_folder(tables: list[EraTable], root: Path, now: datetime | None = None) -> Path:
    """``root/summary_<UTC timestamp>/`` with summary.json, summary.csv and summary.md."""
    now = now or datetime.now(UTC)
    folder = root / f"summary_{now.strftime('%Y%m%d-%H%M%S')}"
    stamp = now.isoformat(timespec="seconds")
    write_atomic(folder / "summary.json", to_json(tables, stamp))
    write_atomic(folder / "summary.csv", to_csv(tables))
    write_atomic(folder / "summary.md", f"# Results ({stamp})\n\n{to_markdown(tables)}")
    return folder


def replace_block(text: str, block: str, file: Path) -> str:
    """``text`` with the content between the markers replaced by ``block``."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0 or end < start:
        raise UserError(
            "the results markers are missing or out of order",
            file=file,
            field=BEGIN,
            fix=f"add a line {BEGIN} and, below it, a line {END} where the table belongs",
        )
    return f"{text[: start + len(BEGIN)]}\n{block.rstrip()}\n{text[end:]}"


def update_markdown(tables: list[EraTable], file: Path, summary_dir: Path | None = None) -> None:
    """Rewrite the marked block of ``file`` with one table per era (atomically)."""
    if not file.is_file():
        raise UserError(
            "file not found",
            file=file,
            field="--publish-to",
            fix="name an existing Markdown file that holds the markers",
        )
    block = to_markdown(tables)
    if summary_dir is not None:
        block += f"\n_Generated into `{summary_dir.name}`._\n"
    write_atomic(file, replace_block(file.read_text(encoding="utf-8"), block, file))
