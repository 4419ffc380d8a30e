"""stdout and stderr that cannot change the verdict about the work (issue 31, item 1 and 2).

A full disk behind stdout (`>/dev/full`), a closed stdout (`>&-`, where Python sets
`sys.stdout` to None) or a reader that went away (`| head -n1`, EPIPE) used to end a command
with 70 ("a bug") or, through rich's own broken-pipe handler (`SystemExit(1)`), with 1
("blockers", "differences") after the work was done. Here every write to stdout and stderr goes
through a guard that never raises: it records the first failure and drops what follows, so the
command runs to its own verdict; `migrate.cli.app` then combines that verdict with the failure
(`OutputGuard.exit_code`).

Commands whose work *is* the output (`inspect`, `snapshot` to stdout) ask the guard to stop at
the first failure (`stop_at_failure`): decoding a whole log into a pipe nobody reads helps no
one. The guard then raises `StdoutUnwritable`, which the CLI ends with the same codes.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from migrate.cli.exit_codes import EXIT_BROKEN_PIPE, EXIT_OK, EXIT_UNREACHABLE

__all__ = [
    "OutputGuard",
    "StdoutUnwritable",
    "guarded_std_streams",
    "reserve_std_fds",
    "stop_at_stdout_failure",
]


class StdoutUnwritable(Exception):
    """Raised by a write to a failed stdout in a command that asked to stop at the first
    failure; the CLI ends it through `OutputGuard.exit_code`, never as a bug."""


@dataclass
class _StreamState:
    """What one guarded stream has seen: its first write failure, if any."""

    name: str
    error: OSError | None = None
    stop_at_failure: bool = False

    def failed(self, exc: OSError) -> None:
        if self.error is None:
            self.error = exc
        if self.stop_at_failure:
            raise StdoutUnwritable(f"{self.name}: {exc.strerror or exc}") from exc


def _closed(name: str) -> OSError:
    """The failure a write to a closed stream (`>&-`: Python's `sys.stdout` is None) is."""
    return OSError(errno.EBADF, f"{name} is closed")


class _Guarded:
    """One stream (text or bytes) through the guard: writes and flushes never raise OSError;
    the first failure is recorded in `state` and what follows is dropped."""

    def __init__(self, target: IO[Any] | None, state: _StreamState) -> None:
        self._target = target
        self.state = state

    def write(self, data: Any) -> int:
        if self.state.error is None and self._target is not None:
            try:
                return self._target.write(data)
            except OSError as exc:
                self.state.failed(exc)
        else:  # failed before, or closed: recorded once; raises again under stop_at_failure
            self.state.failed(self.state.error or _closed(self.state.name))
        return len(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._target is None or self.state.error is not None:
            return
        try:
            self._target.flush()
        except OSError as exc:
            self.state.failed(exc)

    def __getattr__(self, name: str) -> Any:
        if self._target is None:
            raise AttributeError(name)
        return getattr(self._target, name)


class _GuardedText(_Guarded):
    """`sys.stdout` / `sys.stderr` through the guard; rich's consoles and `print` write here.

    `isatty()` is False for a closed stream; `buffer` is the bytes stream under it, guarded
    with the same state (the bytes path of `inspect --json`, `snapshot` and `--json -`)."""

    def __init__(self, stream: IO[str] | None, state: _StreamState) -> None:
        super().__init__(stream, state)
        raw = getattr(stream, "buffer", None) if stream is not None else None
        self.buffer = _Guarded(raw, state)

    def isatty(self) -> bool:
        return self._target is not None and self._target.isatty()


@dataclass
class OutputGuard:
    """The guarded stdout and stderr of one command run, and how their failures end it."""

    stdout: _StreamState = field(default_factory=lambda: _StreamState("stdout"))
    stderr: _StreamState = field(default_factory=lambda: _StreamState("stderr"))

    def exit_code(self, work_code: int) -> int:
        """The exit code of a run whose work ended with `work_code`, given stdout's fate.

        The work's own failure wins (1 blockers, 2 bad input, ...: the verdict about the work);
        a work that succeeded but whose output did not get out ends 141 when the reader went
        away (EPIPE, as a shell reports a command killed by SIGPIPE) and 3 otherwise (a full
        disk, an I/O error, a closed stdout: "a report could not be written after the work was
        done", the README's exit-code table).
        """
        error = self.stdout.error
        if error is None or work_code != EXIT_OK:
            return work_code
        return EXIT_BROKEN_PIPE if error.errno == errno.EPIPE else EXIT_UNREACHABLE

    def message(self) -> str | None:
        """The stderr line for a failed stdout (None when stdout took everything, or when its
        reader went away: `| head` is an ordinary way to read the start)."""
        error = self.stdout.error
        if error is None or error.errno == errno.EPIPE:
            return None
        return (f"its output could not be written to stdout ({error.strerror or error}); "
                "the work itself ended as the exit code says")


def stop_at_stdout_failure() -> None:
    """Make stdout's first failed write raise `StdoutUnwritable`, for the commands whose work
    is the output (`inspect`, `snapshot` to stdout); a no-op outside the CLI's guard."""
    if isinstance(sys.stdout, _GuardedText):
        sys.stdout.state.stop_at_failure = True


def reserve_std_fds() -> None:
    """Open /dev/null on any of fds 0-2 the process was started without (`>&-`).

    Otherwise the first file this run opens gets fd 1 or 2, and a child (the `--on-cutover`
    command, Spark's JVM) or a stray write would put its output into, say, a voter's file.
    Python has already set the matching `sys.std*` to None, which the guard treats as closed.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)
            if opened != fd:  # the lowest free fd is this one, unless a lower one was free
                os.dup2(opened, fd)
                os.close(opened)


@contextmanager
def guarded_std_streams() -> Iterator[OutputGuard]:
    """Put `sys.stdout` and `sys.stderr` behind one `OutputGuard` for the block; restore them.

    At the end stdout is flushed through the guard (what it buffered can fail only now), and a
    failed stdout's fd is pointed at /dev/null so the interpreter's final flush stays quiet.
    """
    guard = OutputGuard()
    saved_out, saved_err = sys.stdout, sys.stderr
    sys.stdout = _GuardedText(saved_out, guard.stdout)
    sys.stderr = _GuardedText(saved_err, guard.stderr)
    try:
        yield guard
    finally:
        guard.stdout.stop_at_failure = False  # the final flush only records
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved_out, saved_err
        for stream, state in ((saved_out, guard.stdout), (saved_err, guard.stderr)):
            if state.error is not None and stream is not None:
                _discard_buffered(stream)


def _discard_buffered(stream: IO[str]) -> None:
    """Point a failed stream's fd at /dev/null: what it still buffers goes nowhere, quietly."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
