"""TEST-ONLY hooks: every place a fault test may stop, kill or slow a real `zk2kraft` run.

The fault tests (tests/fault/) drive the real CLI and need it to die, or stop, at an exact step:
a kill -9 "somewhere during the write" would test a random point, and timing-based kills flake
on a shared machine. So the code names its steps and, only when one of these environment
variables is set, acts at one of them. Each is read when the hook is reached (never at import),
so a test sets it in the child's environment and nothing else has to know. Operators never set
them; unset, each hook is one dictionary lookup.

    ZK2KRAFT_TEST_FAULT=<point>[@<n>][:<action>]   fault_point (voter writes)

* `point`: a name passed to `fault_point` (see `writers/log/staging.py`: `staging-batch`,
  `staged`, `promote-marked`, `promote-renamed`, `promoted`, `cleaned`; `migrate` adds
  `locked`);
* `n`: act at the n-th time the point is reached (default 1);
* `action`: `kill` (SIGKILL itself: no cleanup runs, like a power cut), `term` (SIGTERM
  itself, then carry on: the CLI's handler cleans up), or `pause` (default: print
  `zk2kraft-test-fault: <point> reached (pid N)` on stderr and wait until a byte or EOF arrives
  on stdin, so a test can look at the directories, start a second run, or send a signal).

    ZK2KRAFT_CRASH_AT=<point>[:<n>]                crash_point, crash_when (the online run)

SIGKILLs the process at the n-th pass of `point` (default 1), after printing
`ZK2KRAFT_CRASH_AT: killing zk2kraft at <point>` on stderr. The points are in the online
run's phases (`migrate/online/phases/`, each a `crash_point(...)` call); `crash_when` arms one
for a ZooKeeper multi-op in flight.

    ZK2KRAFT_TEST_PAUSE_AT=<point>:<GATE>          pause_point (the online run)

At `point`, writes `GATE.reached` (holding the point's name) and waits for `GATE.go`.

    ZK2KRAFT_TEST_PAUSE_READ=<N>:<GATE>            ReadPause (the tree read, in zkreader)

After the N-th read result of a tree read, writes `GATE.reached` (JSON: pid, reads so far, the
session id in hex; no secret) and waits until `GATE.go` exists (at most 600 s), once per read.
zkreader cannot import this module (the two leaves import no sibling), so it takes the hook as a
parameter (`read_cluster(pause=...)`, `read_entities(pause=...)`): `migrate` passes
`ReadPause.from_env()` in.

    ZK2KRAFT_PRECOPY_CHUNK=<records>               precopy_chunk (the online run)

Records per durable append of the online pre-copy and mirror (default 20,000); tests lower it
to crash between appends.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "CRASH_ENV",
    "FAULT_ENV",
    "PAUSE_ENV",
    "PRECOPY_CHUNK_ENV",
    "READ_PAUSE_ENV",
    "ReadPause",
    "crash_point",
    "crash_when",
    "fault_point",
    "pause_point",
    "precopy_chunk",
]

FAULT_ENV = "ZK2KRAFT_TEST_FAULT"
CRASH_ENV = "ZK2KRAFT_CRASH_AT"
PAUSE_ENV = "ZK2KRAFT_TEST_PAUSE_AT"
READ_PAUSE_ENV = "ZK2KRAFT_TEST_PAUSE_READ"
PRECOPY_CHUNK_ENV = "ZK2KRAFT_PRECOPY_CHUNK"

_DEFAULT_PRECOPY_CHUNK = 20_000
_READ_PAUSE_MAX_WAIT_S = 600.0

_fault_hits: Counter[str] = Counter()
_crash_hits: Counter[str] = Counter()


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _parse_fault(spec: str) -> tuple[str, int, str]:
    where, _, action = spec.partition(":")
    point, _, nth = where.partition("@")
    return point, int(nth) if nth else 1, action or "pause"


def fault_point(name: str) -> None:
    """Act at this point if `ZK2KRAFT_TEST_FAULT` names it (test-only; see the module doc)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    point, nth, action = _parse_fault(spec)
    if point != name:
        return
    _fault_hits[name] += 1
    if _fault_hits[name] != nth:
        return
    if action == "kill":
        _kill_self()
    elif action == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        sys.stderr.write(f"zk2kraft-test-fault: {name} reached (pid {os.getpid()})\n")
        sys.stderr.flush()
        os.read(sys.stdin.fileno(), 1)


def crash_point(point: str) -> None:
    """Kill -9 ourselves at `point` when `ZK2KRAFT_CRASH_AT` asks for it (see the module doc)."""
    wanted = os.environ.get(CRASH_ENV)
    if not wanted:
        return
    name, _, nth = wanted.partition(":")
    if name != point:
        return
    _crash_hits[point] += 1
    if _crash_hits[point] >= int(nth or 1):
        sys.stderr.write(f"{CRASH_ENV}: killing zk2kraft at {point}\n")
        sys.stderr.flush()
        _kill_self()


def crash_when(point: str, ready: Callable[[], bool], *, wait_s: float = 10.0
               ) -> Callable[[], None] | None:
    """The crash hook for a request in flight: a callback that waits (up to `wait_s`) until
    `ready()` (the request is on the wire), then passes `crash_point(point)`.

    Returns:
        The callback, or None when `ZK2KRAFT_CRASH_AT` does not name `point`.
    """
    if os.environ.get(CRASH_ENV, "").partition(":")[0] != point:
        return None

    def crash_once_ready() -> None:
        deadline = time.monotonic() + wait_s
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.001)
        crash_point(point)

    return crash_once_ready


def pause_point(point: str) -> None:
    """Wait at `point` when `ZK2KRAFT_TEST_PAUSE_AT` asks for it (see the module doc)."""
    wanted = os.environ.get(PAUSE_ENV)
    if not wanted:
        return
    name, _, gate = wanted.partition(":")
    if name != point or not gate:
        return
    Path(gate + ".reached").write_text(point)
    while not Path(gate + ".go").exists():
        time.sleep(0.05)


class ReadPause:
    """The read gate of `ZK2KRAFT_TEST_PAUSE_READ`: pause once, after `after` reads, at `gate`."""

    __slots__ = ("after", "done", "gate")

    def __init__(self, after: int, gate: Path) -> None:
        self.after = after
        self.gate = gate
        self.done = False

    @classmethod
    def from_env(cls) -> ReadPause | None:
        """The hook from the environment, or None (always, outside fault tests)."""
        value = os.environ.get(READ_PAUSE_ENV)
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
        deadline = time.monotonic() + _READ_PAUSE_MAX_WAIT_S
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.02)


def precopy_chunk() -> int:
    """Records per durable append of the online pre-copy (`ZK2KRAFT_PRECOPY_CHUNK`, 20,000)."""
    return int(os.environ.get(PRECOPY_CHUNK_ENV, str(_DEFAULT_PRECOPY_CHUNK)))
