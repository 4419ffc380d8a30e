"""The canary's producer cadence (`migrate.online.canary.run_paced`): one record every interval
on the run's clock, however early the client's `poll` returns.

librdkafka's `poll(timeout)` returns as soon as it has served one event. The fake client here
does what a fast cluster does: every `poll` serves a delivery report 1 ms in. The expected
counts are the clock's arithmetic (1 s at one send per 10 ms), not the code's.
"""

from __future__ import annotations

import threading

from migrate.online.canary import run_paced


class _FastCluster:
    """A clock that moves only inside `poll`, which returns after 1 ms (an event served) or
    at its timeout, whichever is first; `stop` is set once the clock reaches `until`."""

    def __init__(self, until: float) -> None:
        self.now = 0.0
        self.until = until
        self.sends: list[float] = []
        self.stop = threading.Event()

    def clock(self) -> float:
        return self.now

    def send(self) -> None:
        self.sends.append(self.now)

    def poll(self, timeout: float) -> int:
        self.now += min(timeout, 0.001)
        if self.now >= self.until:
            self.stop.set()
        return 1


def test_one_send_per_interval_when_every_poll_returns_early() -> None:
    cluster = _FastCluster(until=1.0)
    run_paced(cluster.send, cluster.poll, cluster.clock, 0.01, cluster.stop)
    # 0.00, 0.01, ..., 0.99: one poll per send would have sent about 1,000
    assert len(cluster.sends) == 100
    gaps = [b - a for a, b in zip(cluster.sends, cluster.sends[1:], strict=False)]
    assert min(gaps) >= 0.01 - 1e-9


def test_sends_that_fell_behind_are_caught_up() -> None:
    cluster = _FastCluster(until=1.0)
    stalled = {"done": False}

    def send() -> None:
        cluster.send()
        if not stalled["done"] and cluster.now >= 0.5:
            stalled["done"] = True
            cluster.now += 0.2  # the process was not scheduled for 200 ms

    run_paced(send, cluster.poll, cluster.clock, 0.01, cluster.stop)
    assert len(cluster.sends) == 100  # the clock's count: the 20 missed sends made up at once


def test_nothing_is_sent_once_stopped() -> None:
    cluster = _FastCluster(until=1.0)
    cluster.stop.set()
    run_paced(cluster.send, cluster.poll, cluster.clock, 0.01, cluster.stop)
    assert cluster.sends == []
