"""Drive the CLI's test-only hooks (writers/_faults.py, docs/testing.md) from a test."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

__all__ = ["start_paused_after_fence"]


def start_paused_after_fence(cmd: list[str], gate: Path) -> subprocess.Popen[str]:
    """Start `cmd` with the test hook that stops it right after the fence; return once it is
    there (it goes on when `<gate>.go` is written)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ZK2KRAFT_TEST_PAUSE_AT": f"after_fence:{gate}"})
    deadline = time.monotonic() + 120
    while not Path(str(gate) + ".reached").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    return proc
