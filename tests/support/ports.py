"""Loopback ports for the tests: the one place they are chosen.

A port is "free" when bind(0) hands it out; it is released again before the caller's server binds
it, so the kernel may hand the same port to the next bind(0). Two guards:

* within one process a port is never handed out twice;
* `scripts/test.sh` runs the full suite as two pytest processes at once (docs/testing.md), and
  each keeps to its own share of the port numbers: `ZK2KRAFT_TEST_PORT_SHARE=K/N` accepts only
  ports with `(port // 2) % N == K` (unset: every port), so a port one process just released is
  never the other's. Halved first: Linux gives bind(0) odd ports (even ones go to connect()), so
  `port % 2` would leave one share nothing.
"""

from __future__ import annotations

import os
import socket

SHARE_ENV = "ZK2KRAFT_TEST_PORT_SHARE"

_HANDED_OUT: set[int] = set()


def _share() -> tuple[int, int]:
    raw = os.environ.get(SHARE_ENV, "0/1")
    k, _, n = raw.partition("/")
    if not (k.isdigit() and n.isdigit() and 0 <= int(k) < int(n)):
        raise ValueError(f"{SHARE_ENV}={raw!r}: expected K/N with 0 <= K < N, e.g. 1/2")
    return int(k), int(n)


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback ports, free a moment ago, of this process's share.

    Every socket drawn stays bound until the draw is done, so the kernel cannot hand the same
    port twice within it; ports of the other share are drawn and dropped.
    """
    k, n = _share()
    held: list[socket.socket] = []
    chosen: list[int] = []
    try:
        while len(chosen) < count:
            if len(held) > 200 * (count + 1):
                raise RuntimeError(f"no {count} free loopback port(s) in share {k}/{n}")
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            held.append(s)
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
            if (port // 2) % n == k and port not in _HANDED_OUT:
                chosen.append(port)
                _HANDED_OUT.add(port)
        return chosen
    finally:
        for s in held:
            s.close()


def free_port() -> int:
    """One loopback port, as `free_ports` chooses them (also: a port where nothing listens)."""
    return free_ports(1)[0]
