"""Ending a test's child process group, bounded: TERM (or the signal asked for), then KILL; and
the tail of such a child's log, for the error that says why it did not come up.

One helper each for the real parts the tests start as process groups (ZooKeeper, the Spark
standalone master and worker), so each waits at most `timeout_s` twice and never hangs a test.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

__all__ = ["LOG_TAIL_LINES", "log_tail", "stop_group"]

LOG_TAIL_LINES = 40


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a child's log, or why there are none."""
    try:
        text = path.read_text("utf-8", "replace")
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:])


def stop_group(proc: subprocess.Popen[bytes], timeout_s: float,
               sig: int = signal.SIGTERM) -> None:
    """Send `sig` to `proc`'s process group and wait; SIGKILL the group after `timeout_s`."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=timeout_s)
