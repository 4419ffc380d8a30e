"""A canary consumer that stops reading while acknowledged records wait is replaced at the next
offset: records read once each, none reported missing, the replacement counted.

librdkafka's fetcher can stall after partition leadership moves (the rehearsals' own clients
saw it). Unreplaced, the canary reported acknowledged records as missing: one CI run of
test_standin_killed_brokers, 6,642 of 16,030 unread after a 240 s drain. Replaced, it happened
again (2,981 of 9,818, locally) while the partition's log held every record: the stalled
consumer's close may block the loop, so it is closed aside, and the end recounts with a new
consumer from the run's first offset.
"""

from __future__ import annotations

import threading
from typing import Any

from migrate.online.canary import Canary


class _Msg:
    def __init__(self, key: bytes, offset: int, value: int) -> None:
        self._key, self._offset, self._value = key, offset, value

    def error(self) -> None:
        return None

    def key(self) -> bytes:
        return self._key

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes:
        return str(self._value).encode()


class _Consumer:
    """Serves the records at offsets 5.. (record n at offset 4 + n) from where it is assigned,
    `stall_after` of them, then nothing."""

    def __init__(self, canary: Canary, stall_after: int | None) -> None:
        self.canary, self.stall_after = canary, stall_after
        self.assigned: int | None = None
        self.closed = False
        self.closed_event = threading.Event()

    def get_watermark_offsets(self, tp: Any, timeout: float) -> tuple[int, int]:
        return 0, 5  # the end before the canary's first record

    def assign(self, tps: list[Any]) -> None:
        self.assigned = tps[0].offset

    def poll(self, timeout: float) -> _Msg | None:
        assert self.assigned is not None
        if self.stall_after == 0 or self.assigned > 7:
            if self.assigned > 7:
                self.canary._consumer_stop.set()  # every record read: the test ends
            return None
        if self.stall_after is not None:
            self.stall_after -= 1
        offset, self.assigned = self.assigned, self.assigned + 1
        return _Msg(self.canary._run.encode(), offset, offset - 4)

    def close(self) -> None:
        self.closed = True
        self.closed_event.set()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0  # a second per look: the stall bound is reached in 31 polls
        return self.now


def test_a_stalled_consumer_is_replaced_at_the_next_offset() -> None:
    canary = Canary("127.0.0.1:9", clock=_Clock())
    consumers: list[_Consumer] = []

    def new_consumer(*, recount: bool = False) -> _Consumer:
        # the first reads record 1 and stalls; its replacement reads on
        consumers.append(_Consumer(canary, 1 if not consumers else None))
        return consumers[-1]

    canary._new_consumer = new_consumer  # type: ignore[method-assign]
    for seq in (1, 2, 3):
        assert canary._tally.next_record() == seq
        canary._tally.record_delivered(0.0, seq, None)
    canary._consume_loop()
    first, second = consumers
    assert second.closed
    canary.stop(None, drain_timeout_s=0)  # waits for the stalled one's close, set aside
    assert first.closed
    assert second.assigned == 8  # started at 6 (after record 1 at offset 5), read 6 and 7
    records = canary._tally.report(None).to_json()["records"]
    assert records == {"produced": 3, "acked": 3, "errors": {}, "consumed": 3, "missing": 0,
                       "duplicates": 0, "consumers_replaced": 1, "recount": None}


def test_no_replacement_while_nothing_is_owed() -> None:
    canary = Canary("127.0.0.1:9", clock=_Clock())
    polls = 0

    class _Idle(_Consumer):
        def poll(self, timeout: float) -> None:
            nonlocal polls
            polls += 1
            if polls == 100:  # 100 s of nothing read, and nothing acknowledged to read
                self.canary._consumer_stop.set()
            return None

    def idle(*, recount: bool = False) -> _Consumer:
        return _Idle(canary, 0)

    canary._new_consumer = idle  # type: ignore[method-assign]
    canary._consume_loop()
    assert canary._tally.report(None).consumers_replaced == 0


def test_a_stalled_consumer_whose_close_blocks_is_still_replaced() -> None:
    canary = Canary("127.0.0.1:9", clock=_Clock())
    consumers: list[_Consumer] = []
    release = threading.Event()

    class _Stuck(_Consumer):
        def close(self) -> None:  # librdkafka's close of a stalled fetcher, never returning
            release.wait(30)
            super().close()

    def new_consumer(*, recount: bool = False) -> _Consumer:
        consumers.append(_Stuck(canary, 1) if not consumers else _Consumer(canary, None))
        return consumers[-1]

    canary._new_consumer = new_consumer  # type: ignore[method-assign]
    for seq in (1, 2, 3):
        canary._tally.next_record()
        canary._tally.record_delivered(0.0, seq, None)
    canary._consume_loop()  # returns: the blocked close is not on the loop's thread
    assert not consumers[0].closed and consumers[1].closed
    assert canary._tally.report(None).missing == 0
    release.set()
    assert consumers[0].closed_event.wait(5)


class _Log(_Consumer):
    """The partition as the brokers hold it: this run's records 1..n at offsets 5.., once
    each, read by the recount's new consumer to the high watermark."""

    def __init__(self, canary: Canary, n: int) -> None:
        super().__init__(canary, None)
        self.n = n

    def get_watermark_offsets(self, tp: Any, timeout: float) -> tuple[int, int]:
        return 0, 5 + self.n

    def poll(self, timeout: float) -> _Msg | None:
        assert self.assigned is not None
        if self.assigned >= 5 + self.n:
            return None
        offset, self.assigned = self.assigned, self.assigned + 1
        return _Msg(self.canary._run.encode(), offset, offset - 4)


def test_the_end_recounts_with_a_new_consumer_what_a_stalled_one_left_unread() -> None:
    canary = Canary("127.0.0.1:9", clock=_Clock())
    canary._first_offset = 5  # the consumer loop started there
    recounts: list[_Log] = []

    def new_consumer(*, recount: bool = False) -> _Consumer:
        assert recount
        recounts.append(_Log(canary, 4))
        return recounts[-1]

    canary._new_consumer = new_consumer  # type: ignore[method-assign]
    for seq in (1, 2, 3, 4):
        canary._tally.next_record()
        canary._tally.record_delivered(0.0, seq, None)
    canary._tally.record_consumed(1)  # the loop's consumer read 1 (twice: a replacement
    canary._tally.record_consumed(1)  # re-read it), then stalled
    assert canary._tally.report(None).missing == 3  # what the loop alone would report

    records = canary.stop(None, drain_timeout_s=0).to_json()["records"]
    assert recounts[0].assigned == 9 and recounts[0].closed
    assert (records["consumed"], records["missing"], records["duplicates"],
            records["recount"]) == (4, 0, 0, "whole")
