"""The stand-in's "majority writable" gate follows Kafka 3.9's check-quorum.

Kafka's fact (`LeaderState`, CHECK_QUORUM_TIMEOUT_FACTOR = 1.5): a leader that has not had a
Fetch from a majority of its voters, itself counted, within 1.5 x controller.quorum.fetch.timeout.ms
resigns. With Kafka's default fetch timeout (2000 ms) that is 3000 ms; with 30000 ms, 45000 ms.
Times are on a fake clock, in milliseconds.
"""

from __future__ import annotations

from writers.raft.leader import heard_from_majority


def test_three_voters_need_one_follower_within_one_and_a_half_fetch_timeouts() -> None:
    now = 100_000.0
    assert heard_from_majority(now, [now - 3000, now - 50_000], 3, 2000)
    assert not heard_from_majority(now, [now - 3001, now - 50_000], 3, 2000)
    assert not heard_from_majority(now, [], 3, 2000)  # no follower fetched this epoch


def test_the_window_scales_with_the_controllers_fetch_timeout() -> None:
    """The old fixed 5 s stopped a run whose controllers tolerate 45 s of silence, and let one
    go on past 3 s when they stand for election after 2 s."""
    now = 100_000.0
    assert heard_from_majority(now, [now - 44_000], 3, 30_000)
    assert not heard_from_majority(now, [now - 46_000], 3, 30_000)
    assert not heard_from_majority(now, [now - 4000], 3, 2000)


def test_five_voters_need_two_followers() -> None:
    now = 100_000.0
    assert not heard_from_majority(now, [now - 100, now - 9000, now - 9000, now - 9000], 5, 2000)
    assert heard_from_majority(now, [now - 100, now - 2900, now - 9000, now - 9000], 5, 2000)
