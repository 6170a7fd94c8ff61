"""Live progress of a job: done, running, failed, infra errors and an ETA.

``Tally`` is the plain bookkeeping (tested without a terminal); ``LiveProgress`` draws
it with rich and prints one line per finished trial, so a log of a non-interactive run
still says what happened. When stdout is not a terminal (a pipe, a log file, CI) nothing
is redrawn: each line is plain text ending in the counts (``[3/10] running 2 ...``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

FAILED_OUTCOMES = frozenset({"failed", "timeout"})


@dataclass
class Tally:
    """Counts of a job's trials; ``done`` includes trials completed by earlier runs."""

    total: int
    done: int = 0
    running: int = 0
    failed: int = 0
    errors: int = 0
    refused: int = 0
    interrupted: int = 0
    retries: int = 0

    def start(self) -> None:
        self.running += 1

    def finish(self, status: str, outcome: str | None) -> None:
        """Record a trial's end: ``status`` from the ledger, ``outcome`` from the report."""
        self.running = max(0, self.running - 1)
        if status == "interrupted":
            self.interrupted += 1
            return
        self.done += 1
        if status == "refused":
            self.refused += 1
        elif status == "error" or outcome == "error":
            self.errors += 1
        elif outcome in FAILED_OUTCOMES:
            self.failed += 1

    def retry(self) -> None:
        """An infrastructure error that will be retried: the trial keeps running."""
        self.retries += 1

    def line(self) -> str:
        return (
            f"running {self.running}  failed {self.failed}  "
            f"infra errors {self.errors} (retries {self.retries})  refused {self.refused}"
        )


class LiveProgress:
    """A rich progress bar over a ``Tally``; thread-safe, usable as a context manager."""

    def __init__(self, tally: Tally, console: Console | None = None) -> None:
        self.tally = tally
        self.console = console or Console()
        self._lock = threading.Lock()
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[line]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            transient=False,
        )
        self._task: TaskID | None = None
        self.plain = not self.console.is_terminal  # no carriage-return redraws in a log

    def _say(self, message: str) -> None:
        """One line; in plain mode with the counts appended."""
        if self.plain:
            t = self.tally
            message = f"{message}  [{t.done}/{t.total}] {t.line()}"
        self._progress.console.print(message, markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> LiveProgress:
        if self.plain:
            t = self.tally
            self._say(f"trials: {t.total} ({t.done} done before)")
            return self
        self._progress.start()
        self._task = self._progress.add_task(
            "trials", total=self.tally.total, completed=self.tally.done, line=self.tally.line()
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.plain:
            self._say("finished")
            return
        self._refresh()
        self._progress.stop()

    def note(self, message: str) -> None:
        with self._lock:
            self._progress.console.print(message, markup=False, highlight=False, soft_wrap=True)

    def started(self, key: str) -> None:
        with self._lock:
            self.tally.start()
            self._refresh()

    def retrying(self, key: str, detail: str) -> None:
        with self._lock:
            self.tally.retry()
            self._say(f"retry   {key}: infrastructure error: {detail}")
            self._refresh()

    def finished(self, key: str, status: str, outcome: str | None, detail: str = "") -> None:
        with self._lock:
            self.tally.finish(status, outcome)
            word = outcome if status == "done" and outcome else status
            extra = f"  {detail}" if detail else ""
            self._say(f"{word:11} {key}{extra}")
            self._refresh()

    def _refresh(self) -> None:
        if self._task is not None and not self.plain:
            self._progress.update(self._task, completed=self.tally.done, line=self.tally.line())
