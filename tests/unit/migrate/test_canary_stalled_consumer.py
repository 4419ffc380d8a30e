"""A canary consumer that stops reading while acknowledged records wait is replaced at the next
offset: records read once each, none reported missing, the replacement counted.

librdkafka's fetcher can stall after partition leadership moves (the rehearsals' own clients
saw it). Unreplaced, the canary reported acknowledged records as missing: one CI run of
test_standin_killed_brokers, 6,642 of 16,030 unread after a 240 s drain.
"""

from __future__ import annotations

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


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0  # a second per look: the stall bound is reached in 31 polls
        return self.now


def test_a_stalled_consumer_is_replaced_at_the_next_offset() -> None:
    canary = Canary("127.0.0.1:9", clock=_Clock())
    consumers: list[_Consumer] = []

    def new_consumer() -> _Consumer:
        # the first reads record 1 and stalls; its replacement reads on
        consumers.append(_Consumer(canary, 1 if not consumers else None))
        return consumers[-1]

    canary._new_consumer = new_consumer  # type: ignore[method-assign]
    for seq in (1, 2, 3):
        assert canary._tally.next_record() == seq
        canary._tally.record_delivered(0.0, seq, None)
    canary._consume_loop()
    first, second = consumers
    assert first.closed and second.closed
    assert second.assigned == 8  # started at 6 (after record 1 at offset 5), read 6 and 7
    records = canary._tally.report(None).to_json()["records"]
    assert records == {"produced": 3, "acked": 3, "errors": {}, "consumed": 3, "missing": 0,
                       "duplicates": 0, "consumers_replaced": 1}


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

    canary._new_consumer = lambda: _Idle(canary, 0)  # type: ignore[method-assign]
    canary._consume_loop()
    assert canary._tally.report(None).consumers_replaced == 0
