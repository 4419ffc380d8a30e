"""TEST-ONLY fault injection at named points of a voter write (`ZK2KRAFT_TEST_FAULT`).

The fault tests (tests/fault/) drive the real `zk2kraft migrate` and need it to die, or stop, at
an exact step of staging and promotion: a kill -9 "somewhere during the write" would test a
random point, and timing-based kills flake on a shared machine. So the writer names its steps
and, only when this environment variable is set, acts at one of them:

    ZK2KRAFT_TEST_FAULT=<point>[@<n>][:<action>]

* `point`: a name passed to `fault_point` (see `writers/_staging.py`: `staging-batch`,
  `staged`, `promote-marked`, `promote-renamed`, `promoted`, `cleaned`; `migrate` adds
  `locked`);
* `n`: act at the n-th time the point is reached (default 1);
* `action`: `kill` (SIGKILL itself: no cleanup runs, like a power cut), `term` (SIGTERM
  itself, then carry on: the CLI's handler cleans up), or `pause` (default: print
  `zk2kraft-test-fault: <point> reached (pid N)` on stderr and wait until a byte or EOF arrives
  on stdin, so a test can look at the directories, start a second run, or send a signal).

Operators never set it; nothing else reads it. Unset, `fault_point` is a dictionary lookup.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import Counter

__all__ = ["FAULT_ENV", "fault_point"]

FAULT_ENV = "ZK2KRAFT_TEST_FAULT"

_hits: Counter[str] = Counter()


def _parse(spec: str) -> tuple[str, int, str]:
    where, _, action = spec.partition(":")
    point, _, nth = where.partition("@")
    return point, int(nth) if nth else 1, action or "pause"


def fault_point(name: str) -> None:
    """Act at this point if `ZK2KRAFT_TEST_FAULT` names it (test-only; see the module doc)."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    point, nth, action = _parse(spec)
    if point != name:
        return
    _hits[name] += 1
    if _hits[name] != nth:
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif action == "term":
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        sys.stderr.write(f"zk2kraft-test-fault: {name} reached (pid {os.getpid()})\n")
        sys.stderr.flush()
        os.read(sys.stdin.fileno(), 1)
