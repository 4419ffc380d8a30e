"""The signals the kernel delivered, read from a pipe rather than waited for as Python handlers.

Python runs a signal's handler later, in the main thread, once the interpreter notices it; the
C-level handler that notices writes the signal's number to the wakeup fd first
(`signal.set_wakeup_fd`). In a loaded test run an online run went on mirroring for 120 s
after SIGTERM, its main thread busy in the mirror loop and the Python handler never run (stacks
by SIGQUIT, docs/testing.md). The mirror loop therefore also reads this pipe
each turn (`CutoverRequest`'s poll): SIGUSR1 asks for the cutover, SIGTERM and SIGINT end the
run through their Python handler if it has not run (it raises, and the run's cleanup follows,
as always).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

from migrate.cli.exit_codes import Terminated

__all__ = ["SignalInbox", "run_unhandled", "signal_inbox"]


class SignalInbox:
    """The read end of the wakeup pipe; `take` returns what arrived since the last call."""

    def __init__(self, read_fd: int) -> None:
        self._fd = read_fd

    def take(self) -> set[int]:
        """The signal numbers delivered since the last call (each once), without waiting."""
        got: set[int] = set()
        while True:
            try:
                chunk = os.read(self._fd, 512)
            except OSError:  # nothing more (EAGAIN), or closed under us at the run's end
                return got
            if not chunk:
                return got
            got.update(chunk)


@contextlib.contextmanager
def signal_inbox() -> Iterator[SignalInbox]:
    """The wakeup pipe for the block (main thread only), the previous wakeup fd put back after.

    Raises:
        ValueError: not in the main thread (as `signal.set_wakeup_fd`).
    """
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    os.set_blocking(write_fd, False)  # the C handler must never block on a full pipe
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    try:
        yield SignalInbox(read_fd)
    finally:
        signal.set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)


def run_unhandled(delivered: set[int]) -> None:
    """End the run for a SIGTERM or SIGINT among `delivered`: call its Python handler if Python
    has not (it raises); a SIGTERM whose handler ran (it leaves SIGTERM ignored) and yet finds
    the run still going lost its exception somewhere: `Terminated` again."""
    if signal.SIGINT in delivered:
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, None)
    if signal.SIGTERM in delivered:
        handler = signal.getsignal(signal.SIGTERM)
        if callable(handler):
            handler(signal.SIGTERM, None)
        raise Terminated
