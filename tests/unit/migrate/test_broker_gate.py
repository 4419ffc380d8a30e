"""The cutover's broker gate (issue 30, finding 2): no fence over brokers that do not serve.

Driven with hand-written broker states and an injected clock; the expected texts are written
out by hand."""

from __future__ import annotations

import pytest

from migrate.errors import BrokersNotServingError
from migrate.online.broker_gate import BrokerGate, brokers_line, not_serving_reason
from writers import BrokerServing


class _Rig:
    def __init__(self, *, wait_s: float = 10.0, fence_anyway: bool = False) -> None:
        self.now = 0.0
        self.listed: set[int] = {1, 2, 3}
        self.seen: dict[int, BrokerServing] = {n: BrokerServing(n, True, True, 0)
                                               for n in (1, 2, 3)}
        self.said: list[str] = []
        self.warned: list[str] = []
        self.signal = True
        self.gate = BrokerGate(
            serving=lambda: dict(self.seen), listed=lambda: set(self.listed),
            say=self.said.append, warn_once=lambda _k, line: self.warned.append(line),
            clock=lambda: self.now, clear_signal=self._clear, broker_wait_s=wait_s,
            fence_without_brokers=fence_anyway)

    def _clear(self) -> None:
        self.signal = False


def test_every_broker_serving_opens_the_gate() -> None:
    rig = _Rig()
    assert rig.gate.open(manual=True) == (True, [])
    assert rig.said == [] and rig.signal


def test_a_signal_over_a_dead_broker_is_refused_naming_it_and_can_be_given_again() -> None:
    rig = _Rig()
    assert rig.gate.status() is not None  # the mirror began: brokers 1-3 listed
    # broker 2 died: its ZooKeeper registration expired and it stopped fetching
    rig.listed = {1, 3}
    rig.seen[2] = BrokerServing(2, False, False, 14)
    assert rig.gate.open(manual=True) == (False, [])
    assert rig.said == [
        "cutover refused: broker 2 (not registered with the stand-in, not fetching). Nothing was "
        "fenced: ZooKeeper's controller keeps running the cluster and mirroring goes on. Start "
        "the broker(s) again in migration mode (or find why they do not reach the stand-in) and "
        "give the signal again once they serve (the status line shows each broker)"]
    assert not rig.signal  # the signal is spent: the next one asks again
    rig.seen[2] = BrokerServing(2, True, True, 0)
    assert rig.gate.open(manual=True) == (True, [])


def test_registered_but_not_fetching_is_not_serving() -> None:
    rig = _Rig()
    rig.seen[3] = BrokerServing(3, True, False, 120)
    assert rig.gate.open(manual=True) == (False, [])
    assert rig.said[0].startswith("cutover refused: broker 3 (not fetching). ")


def test_cutover_now_waits_for_the_printed_bound_then_stops_with_nothing_fenced() -> None:
    rig = _Rig(wait_s=10)
    del rig.seen[1]  # never registered with the stand-in
    assert rig.gate.open(manual=False) == (False, [])
    assert rig.said == ["cutover waits for broker 1 (not registered with the stand-in, not "
                        "fetching) to be registered with the stand-in and fetching (at most "
                        "10s, --broker-wait)"]
    rig.now = 9.9
    assert rig.gate.open(manual=False) == (False, [])
    rig.now = 10.0
    with pytest.raises(BrokersNotServingError) as exc:
        rig.gate.open(manual=False)
    assert str(exc.value).startswith(
        "cutover not done: after --broker-wait 10s still broker 1 (not registered with the "
        "stand-in, not fetching). Nothing was fenced: ZooKeeper's controller keeps running the "
        "cluster.")


def test_cutover_now_goes_on_once_the_broker_is_back() -> None:
    rig = _Rig(wait_s=10)
    rig.seen[2] = BrokerServing(2, False, True, 3)
    assert rig.gate.open(manual=False) == (False, [])
    rig.now = 4.0
    rig.seen[2] = BrokerServing(2, True, True, 0)
    assert rig.gate.open(manual=False) == (True, [])
    assert rig.said[-1] == "every broker is registered with the stand-in and fetching"


def test_fence_without_brokers_cuts_over_after_the_wait_naming_them() -> None:
    rig = _Rig(wait_s=5, fence_anyway=True)
    del rig.seen[3]
    rig.listed = {1, 2, 3}
    assert rig.gate.open(manual=True) == (False, [])  # waits, even on a signal
    assert rig.signal
    rig.now = 5.0
    assert rig.gate.open(manual=True) == (True, [3])
    assert rig.warned[0].startswith("WARNING: after --broker-wait 5s still broker 3 (not "
                                    "registered with the stand-in, not fetching) (are they in "
                                    "migration mode")


def test_no_standin_means_no_broker_condition() -> None:
    gate = BrokerGate(serving=lambda: None, listed=lambda: {1}, say=print,
                      warn_once=lambda _k, _l: None, clock=lambda: 0.0,
                      clear_signal=lambda: None, broker_wait_s=1, fence_without_brokers=False)
    assert gate.open(manual=True) == (True, [])
    assert gate.status() is None


def test_the_status_line_shows_each_broker() -> None:
    rig = _Rig()
    rig.listed = {1, 2, 3, 4}
    rig.seen[2] = BrokerServing(2, True, False, 40)
    rig.seen[3] = BrokerServing(3, True, True, 7)
    assert brokers_line(rig.gate.status() or []) == "1:ok/lag 0 2:not-fetching 3:ok/lag 7 " \
        "4:unregistered"


def test_a_broker_registered_but_fenced_is_named_so() -> None:
    # helper-16's 3.6.2 brokers: Kafka logged "Successfully registered broker 0", then every
    # Fetch was refused, so they never caught up and stayed fenced; "not registered" misled
    seen = BrokerServing(0, False, False, None, fenced=True)
    assert not_serving_reason(0, seen) == (
        "broker 0 (registered with the stand-in but fenced: not caught up with its log; "
        "not fetching)")
    assert brokers_line([seen.to_json()]) == "0:fenced"
    assert not_serving_reason(1, BrokerServing(1, False, True, 3)) == \
        "broker 1 (not registered with the stand-in)"
