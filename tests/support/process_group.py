"""Ending a test's child process group, bounded: TERM (or the signal asked for), then KILL.

One helper for the real parts the tests start as process groups (ZooKeeper, the Spark
standalone master and worker), so each waits at most `timeout_s` twice and never hangs a test.
"""

from __future__ import annotations

import os
import signal
import subprocess

__all__ = ["stop_group"]


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
