"""What the canary saw (`migrate.online.canary`), and the report made of it.

`Canary` owns the clients and their threads; `CanaryTally` owns what their callbacks record, under
one lock: the controller requests (sent, served, failed), the records (produced, acknowledged,
consumed), the controller ids the brokers reported and which clients saw every broker down.
`CanaryTally.report` turns it into the figures relative to t0 (the fence).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CanaryReport", "CanaryTally"]

_TIMELINE_BEFORE_S = 2.0
"""The report's request timeline starts this long before t0 (sent, done, outcome per request)."""


def _gap(times: list[float], after: float) -> tuple[float, float, float] | None:
    """The longest gap (ms, start, end) between consecutive times that ends after `after`."""
    best: tuple[float, float, float] | None = None
    ordered = sorted(times)
    for prev, cur in zip(ordered, ordered[1:], strict=False):
        if cur < after:
            continue
        if best is None or cur - prev > best[0] / 1000.0:
            best = ((cur - prev) * 1000.0, prev, cur)
    return best


@dataclass
class CanaryReport:
    """What the canary saw; all times relative to t0 (the fence), in ms."""

    observed_ms: float | None
    gap_from_ms: float | None
    gap_to_ms: float | None
    t2_ms: float | None
    producer_stall_ms: float | None
    requests_sent: int
    requests_ok: int
    request_errors: dict[str, int]
    produced: int
    acked: int
    produce_errors: dict[str, int]
    consumed: int
    missing: int
    duplicates: int
    controller_ids: list[tuple[float, int]] = field(default_factory=list)
    observed_is_lower_bound: bool = False
    consumers_replaced: int = 0  # stalled consumers replaced at the next offset (canary.py)
    recount: str | None = None  # the end's recount by a new consumer: None, "whole", "partial"
    timeline: list[tuple[float, float, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 3)

        return {
            "observed_ms": r(self.observed_ms),
            "gap_ms": [r(self.gap_from_ms), r(self.gap_to_ms)],
            "t2_ms": r(self.t2_ms),
            "producer_stall_ms": r(self.producer_stall_ms),
            "requests": {"sent": self.requests_sent, "ok": self.requests_ok,
                         "errors": dict(self.request_errors)},
            "records": {"produced": self.produced, "acked": self.acked,
                        "errors": dict(self.produce_errors), "consumed": self.consumed,
                        "missing": self.missing, "duplicates": self.duplicates,
                        "consumers_replaced": self.consumers_replaced,
                        "recount": self.recount},
            "observed_is_lower_bound": self.observed_is_lower_bound,
            "controller_ids": [[r(t), n] for t, n in self.controller_ids],
            "timeline": [[r(a), r(b), what] for a, b, what in sorted(self.timeline)],
        }


class CanaryTally:
    """What the canary's loops recorded, on the run's clock, shared by their threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: list[float] = []
        self._ok: list[tuple[float, float]] = []  # (sent, done)
        self._req_errors: dict[str, int] = {}
        self._failed: list[tuple[float, float, str]] = []
        self._in_flight = 0
        self._produced = 0  # the produce loop is its only writer
        self._acks: list[float] = []
        self._acked: set[int] = set()
        self._prod_errors: dict[str, int] = {}
        self._consumed: dict[int, int] = {}
        self._controller_ids: list[tuple[float, int]] = []
        self._consumers_replaced = 0
        self._recount: str | None = None  # "whole"/"partial" once `recounted`
        # client -> librdkafka reported every broker down and nothing was served since
        self._down = {"produce": False, "consume": False}

    # -- controller requests ----------------------------------------------------------------

    def in_flight(self) -> int:
        with self._lock:
            return self._in_flight

    def request_sent(self, sent: float) -> None:
        with self._lock:
            self._sent.append(sent)
            self._in_flight += 1

    def request_done(self, sent: float, done: float, error: str | None) -> None:
        """A request sent at `sent` answered at `done`: served (`error` None) or failed."""
        with self._lock:
            self._in_flight -= 1
            if error is None:
                self._ok.append((sent, done))
            else:
                self._req_errors[error] = self._req_errors.get(error, 0) + 1
                self._failed.append((sent, done, error))

    def served_since(self, t0: float) -> bool:
        """A request sent at or after `t0` was served."""
        with self._lock:
            return any(sent >= t0 for sent, _ in self._ok)

    def controller_seen(self, at: float, controller_id: int) -> None:
        with self._lock:
            self._controller_ids.append((at, controller_id))

    # -- records -----------------------------------------------------------------------------

    def next_record(self) -> int:
        """The next record's number (1, 2, ...), counted as produced."""
        self._produced += 1
        return self._produced

    def record_delivered(self, at: float, seq: int, error: str | None) -> None:
        """The producer's delivery report for record `seq`: acknowledged (`error` None)."""
        with self._lock:
            if error is None:
                self._acks.append(at)
                self._acked.add(seq)
                self._down["produce"] = False
            else:
                self._prod_errors[error] = self._prod_errors.get(error, 0) + 1

    def record_consumed(self, seq: int) -> None:
        with self._lock:
            self._consumed[seq] = self._consumed.get(seq, 0) + 1
            self._down["consume"] = False

    def recounted(self, counts: dict[int, int], *, whole: bool) -> None:
        """A new consumer's read of the run's records (`Canary._recount`): with `whole`, it
        read to the high watermark and its counts are the log's (a record the stalled
        consumer read twice is not a duplicate in the log); otherwise what it read adds to
        what the loop's consumer read."""
        with self._lock:
            if whole:
                self._consumed = dict(counts)
            else:
                for seq, n in counts.items():
                    self._consumed[seq] = max(n, self._consumed.get(seq, 0))
            self._recount = "whole" if whole else "partial"

    def consumer_replaced(self) -> None:
        with self._lock:
            self._consumers_replaced += 1

    def all_acked_consumed(self) -> bool:
        with self._lock:
            return self._acked <= self._consumed.keys()

    # -- progress ----------------------------------------------------------------------------

    def served(self) -> tuple[int, int]:
        """(controller requests served, records acknowledged) so far."""
        with self._lock:
            return len(self._ok), len(self._acks)

    def request_errors(self) -> dict[str, int]:
        with self._lock:
            return dict(self._req_errors)

    def all_brokers_down(self, client: str) -> None:
        """librdkafka told `client` ("produce", "consume") that every broker is down."""
        with self._lock:
            self._down[client] = True

    def brokers_down(self) -> bool:
        """Both clients saw every broker down, and neither has been served since."""
        with self._lock:
            return all(self._down.values())

    # -- report ------------------------------------------------------------------------------

    def report(self, t0: float | None) -> CanaryReport:
        """The figures relative to `t0` (without one, to the first request served)."""
        with self._lock:
            done = [d for _, d in self._ok]
            origin = t0 if t0 is not None else (min(done) if done else 0.0)
            lower_bound = not any(d < origin for d in done)
            # No request served before t0: the gap is counted from t0 (a lower bound).
            gap = _gap(done + ([origin] if lower_bound else []), origin)
            after = [d for s, d in self._ok if s >= origin]
            stall = _gap(self._acks, origin)
            missing = len(self._acked - self._consumed.keys())
            dups = sum(c - 1 for c in self._consumed.values() if c > 1)
            return CanaryReport(
                observed_ms=None if gap is None else gap[0],
                gap_from_ms=None if gap is None else (gap[1] - origin) * 1000.0,
                gap_to_ms=None if gap is None else (gap[2] - origin) * 1000.0,
                t2_ms=(min(after) - origin) * 1000.0 if after and t0 is not None else None,
                producer_stall_ms=None if stall is None else stall[0],
                requests_sent=len(self._sent), requests_ok=len(self._ok),
                request_errors=dict(self._req_errors), produced=self._produced,
                acked=len(self._acked), produce_errors=dict(self._prod_errors),
                consumed=len(self._consumed), missing=missing, duplicates=dups,
                controller_ids=[((t - origin) * 1000.0, c) for t, c in self._controller_ids],
                observed_is_lower_bound=lower_bound,
                consumers_replaced=self._consumers_replaced, recount=self._recount,
                timeline=[((s - origin) * 1000.0, (d - origin) * 1000.0, "ok")
                          for s, d in self._ok if d >= origin - _TIMELINE_BEFORE_S]
                + [((s - origin) * 1000.0, (d - origin) * 1000.0, e)
                   for s, d, e in self._failed if d >= origin - _TIMELINE_BEFORE_S])
