"""Progress bars on stderr for long reads and Spark stages, and only for long ones.

A bar appears once the work has run for more than `delay_s` (1 s by default), so quick commands
print nothing but their result. It is off under `--quiet`, when the document goes to stdout
(`--json -`), and when stderr is not a terminal (CI logs, pipes), because bars there are noise.
Work reports progress through plain `progress(done, total)` callables (the reader's contract), so
nothing below the CLI knows about rich. The clock is injected for tests.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["ProgressBars", "ProgressCallback", "progress_wanted"]

ProgressCallback = Callable[[int, int], None]


def progress_wanted(*, quiet: bool, stdout_is_document: bool, stream: TextIO | None = None) -> bool:
    """Decide whether bars may be drawn.

    Args:
        quiet: `--quiet` was given.
        stdout_is_document: stdout carries a machine-readable document (`--json -`, snapshot to
            stdout); bars go to stderr anyway, but a terminal shared by both stays readable.
        stream: where bars would go (stderr by default).
    """
    target = sys.stderr if stream is None else stream
    return not quiet and not stdout_is_document and target.isatty()


class ProgressBars:
    """A context manager handing out `progress(done, total)` callbacks, one bar per task.

    Nothing is drawn until some task is still running `delay_s` after the manager was entered.

    Args:
        enabled: draw at all (see `progress_wanted`); when False every callback is a no-op.
        console: where to draw; a stderr console by default.
        delay_s: how long work may run before bars appear.
        clock: seconds, monotonic; injected by tests.
    """

    def __init__(
        self,
        *,
        enabled: bool,
        console: Console | None = None,
        delay_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._enabled = enabled
        self._console = console if console is not None else Console(stderr=True)
        self._delay_s = delay_s
        self._clock = clock
        self._started_at = 0.0
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        self._latest: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()  # callbacks may come from reader threads

    @property
    def visible(self) -> bool:
        """True once bars have been drawn."""
        return self._progress is not None

    def __enter__(self) -> ProgressBars:
        self._started_at = self._clock()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def task(self, description: str) -> ProgressCallback:
        """Return the `progress(done, total)` callback of one task (e.g. "reading ZooKeeper")."""

        def report(done: int, total: int) -> None:
            self._update(description, done, total)

        return report

    def _update(self, description: str, done: int, total: int) -> None:
        if not self._enabled:
            return
        with self._lock:
            self._update_locked(description, done, total)

    def _update_locked(self, description: str, done: int, total: int) -> None:
        self._latest[description] = (done, total)
        if self._progress is None:
            if self._clock() - self._started_at < self._delay_s or (total and done >= total):
                return
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._console,
                transient=True,
            )
            self._progress.start()
        for name, (d, t) in self._latest.items():
            if name not in self._tasks:
                self._tasks[name] = self._progress.add_task(name, total=t or None)
            self._progress.update(self._tasks[name], completed=d, total=t or None)
