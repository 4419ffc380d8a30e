"""The canary's tally: what its loops record, and the report's figures relative to t0.

The expected figures are worked out by hand from the times below (t0 = 10.0 s on the run's
clock), as the report's definitions in migrate/online/canary.py's docstring state them.
"""

from __future__ import annotations

from migrate.online.canary_tally import CanaryTally


def _tally() -> CanaryTally:
    tally = CanaryTally()
    for sent, done, error in ((9.0, 9.1, None), (9.5, 9.6, None),
                              (10.1, 11.0, "REQUEST_TIMED_OUT"), (10.2, 12.6, None),
                              (12.7, 12.8, None)):
        tally.request_sent(sent)
        tally.request_done(sent, done, error)
    assert [tally.next_record() for _ in range(4)] == [1, 2, 3, 4]
    tally.record_delivered(9.0, 1, None)
    tally.record_delivered(9.5, 2, None)
    tally.record_delivered(11.5, 3, None)
    tally.record_delivered(11.6, 4, "MSG_TIMED_OUT")
    for seq in (1, 2, 2):
        tally.record_consumed(seq)
    tally.controller_seen(9.0, 1)
    tally.controller_seen(11.0, 3000)
    return tally


def test_the_report_counts_from_the_fence() -> None:
    doc = _tally().report(10.0).to_json()
    assert doc == {
        # served at 9.6 s, next at 12.6 s: the gap ending after t0
        "observed_ms": 3000.0, "gap_ms": [-400.0, 2600.0],
        # the first request sent after t0 that succeeded (sent 10.2 s) was done at 12.6 s
        "t2_ms": 2600.0,
        # acknowledgements at 9.5 s and 11.5 s
        "producer_stall_ms": 2000.0,
        "requests": {"sent": 5, "ok": 4, "errors": {"REQUEST_TIMED_OUT": 1}},
        "records": {"produced": 4, "acked": 3, "errors": {"MSG_TIMED_OUT": 1}, "consumed": 2,
                    "missing": 1, "duplicates": 1, "consumers_replaced": 0, "recount": None},
        "observed_is_lower_bound": False,
        "controller_ids": [[-1000.0, 1], [1000.0, 3000]],
        "timeline": [[-1000.0, -900.0, "ok"], [-500.0, -400.0, "ok"],
                     [100.0, 1000.0, "REQUEST_TIMED_OUT"], [200.0, 2600.0, "ok"],
                     [2700.0, 2800.0, "ok"]],
    }


def test_no_request_served_before_the_fence_makes_the_gap_a_lower_bound() -> None:
    tally = CanaryTally()
    tally.request_sent(10.5)
    tally.request_done(10.5, 13.0, None)
    doc = tally.report(10.0).to_json()
    assert (doc["observed_ms"], doc["gap_ms"], doc["t2_ms"]) == (3000.0, [0.0, 3000.0], 3000.0)
    assert doc["observed_is_lower_bound"] is True


def test_progress_questions() -> None:
    tally = _tally()
    assert tally.served() == (4, 3)
    assert tally.request_errors() == {"REQUEST_TIMED_OUT": 1}
    assert tally.in_flight() == 0
    assert tally.served_since(10.2) and not tally.served_since(12.8)
    assert not tally.all_acked_consumed()  # record 3 acknowledged, never read
    tally.record_consumed(3)
    assert tally.all_acked_consumed()


def test_brokers_down_needs_both_clients_and_clears_on_the_next_record() -> None:
    tally = CanaryTally()
    tally.all_brokers_down("produce")
    assert not tally.brokers_down()
    tally.all_brokers_down("consume")
    assert tally.brokers_down()
    tally.record_consumed(1)
    assert not tally.brokers_down()
