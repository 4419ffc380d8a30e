"""TEST-ONLY hook: hold the tree read after N znodes, so fault tests can strike mid-read.

Fault tests (tests/fault/test_zk_faults.py) kill, pause or expire ZooKeeper *while* the CLI
reads the tree. Timing that from outside with sleeps would be flaky on a busy machine, so the
reader offers one deterministic point instead:

    ZK2KRAFT_TEST_PAUSE_READ="N:GATE"

After the N-th read result, the reader writes `GATE.reached` (JSON: pid, reads so far, the
session id in hex; no secret) and then waits until `GATE.go` exists (at most 600 s), and reads
on. Reads already in flight stay in flight; the rest are issued only after the gate opens, so a
fault injected in between hits the rest of the read. Operators never set this variable; when
it is unset the reader does one `None` check per round.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

__all__ = ["ENV", "ReadPause"]

ENV = "ZK2KRAFT_TEST_PAUSE_READ"
_MAX_WAIT_S = 600.0


class ReadPause:
    """The parsed hook: pause once, after `after` reads, at `gate`."""

    __slots__ = ("after", "done", "gate")

    def __init__(self, after: int, gate: Path) -> None:
        self.after = after
        self.gate = gate
        self.done = False

    @classmethod
    def from_env(cls) -> ReadPause | None:
        """The hook from the environment, or None (always, outside fault tests)."""
        value = os.environ.get(ENV)
        if not value:
            return None
        count, _, gate = value.partition(":")
        return cls(int(count), Path(gate))

    def check(self, reads: int, client_id: tuple[int, bytes] | None) -> None:
        """Hold here once `reads` reaches the threshold (see the module docstring).

        Args:
            reads: reads finished so far.
            client_id: kazoo's (session id, password); only the id is written.
        """
        if self.done or reads < self.after:
            return
        self.done = True
        session = f"0x{client_id[0]:x}" if client_id else None
        info = {"pid": os.getpid(), "reads": reads, "session_id": session}
        tmp = self.gate.with_name(self.gate.name + ".tmp")
        tmp.write_text(json.dumps(info))
        os.replace(tmp, self.gate.with_name(self.gate.name + ".reached"))
        go = self.gate.with_name(self.gate.name + ".go")
        deadline = time.monotonic() + _MAX_WAIT_S
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
