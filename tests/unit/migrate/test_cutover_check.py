"""`cutover_problems`: which facts after a handoff end the run with exit 4 (issue 16, item 3)."""

from __future__ import annotations

from collections.abc import Sequence

from migrate.online.cutover_check import cutover_problems
from migrate.online.outcome import OnlineOutcome


def _outcome(*, unregistered: list[int] | None = None, claimed: bool = True,
             standin: bool = True) -> OnlineOutcome:
    out = OnlineOutcome(brokers_unregistered=unregistered, zk_brokers=[0, 1, 2])
    out.transport = {"kind": "standin" if standin else "voter-dirs"}
    out.fence_at = 10.0
    if claimed:
        out.stamps["claimed"] = 12.0
    return out


def _canary(*, t2: float | None = 150.0, missing: int = 0, observed: float = 4000.0
            ) -> dict[str, object]:
    return {"t2_ms": t2, "observed_ms": observed, "records": {"missing": missing}}


def _codes(out: OnlineOutcome, canary: dict[str, object] | None = None,
           max_window_s: float | None = None, serving: str | None = None) -> list[str]:
    asked: list[Sequence[int]] = []

    def ask(ids: Sequence[int]) -> str | None:
        asked.append(ids)
        return serving

    problems = cutover_problems(out, broker_wait_s=60, handoff_timeout_s=120, canary=canary,
                                max_window_s=max_window_s, bootstrap="b:9092",
                                ask_brokers=None if canary is None else ask)
    if canary is not None:
        assert asked == [[0, 1, 2]]  # every broker ZooKeeper listed at the fence
    return [p.code for p in problems]


def test_a_confirmed_cutover_has_no_problem() -> None:
    assert _codes(_outcome(unregistered=[])) == []
    assert _codes(_outcome(unregistered=[]), _canary(), max_window_s=5) == []
    # local voters: nobody claims until the operator starts the controllers
    assert _codes(_outcome(claimed=False, standin=False)) == []


def test_each_unconfirmed_fact_is_its_own_problem() -> None:
    assert _codes(_outcome(unregistered=[1, 2])) == ["BROKERS_UNREGISTERED_AT_FENCE"]
    assert _codes(_outcome(claimed=False)) == ["NO_CONTROLLER_CLAIM"]
    following = _outcome()
    following.brokers_not_following = [2]
    assert _codes(following) == ["BROKERS_NOT_FOLLOWING"]
    assert _codes(_outcome(), _canary(t2=None)) == ["NO_CONTROLLER_REQUEST_SERVED"]
    assert _codes(_outcome(), _canary(missing=3)) == ["RECORDS_MISSING"]
    assert _codes(_outcome(), _canary(observed=5001.0), max_window_s=5) == ["WINDOW_OVER_BOUND"]
    assert _codes(_outcome(), _canary(), serving="KafkaException: timed out") == [
        "BROKERS_NOT_SERVING"]


def test_the_message_says_what_was_seen() -> None:
    problems = cutover_problems(_outcome(unregistered=[1]), broker_wait_s=7,
                                handoff_timeout_s=120, canary=None, max_window_s=None,
                                ask_brokers=None, bootstrap=None)
    assert "broker(s) [1]" in problems[0].message and "--broker-wait 7s" in problems[0].message
    assert problems[0].to_json() == {"code": "BROKERS_UNREGISTERED_AT_FENCE",
                                     "message": problems[0].message}


def test_an_on_cutover_command_that_fails_or_hangs_is_never_confirmed() -> None:
    # issue 30 item 5: a start command exiting 7 with local voters and no claim was exit 0
    failed = _outcome(claimed=False, standin=False)
    failed.claim_awaited, failed.on_cutover_exit = True, 7
    assert _codes(failed) == ["ON_CUTOVER_FAILED", "NO_CONTROLLER_CLAIM"]
    # item 6: still running when --handoff-timeout ran out, left running
    hanging = _outcome(claimed=False, standin=False)
    hanging.claim_awaited, hanging.on_cutover_still_running = True, True
    assert _codes(hanging) == ["ON_CUTOVER_STILL_RUNNING", "NO_CONTROLLER_CLAIM"]
    # a command that exits 0 and whose controller claims is confirmed
    started = _outcome(standin=False)
    started.claim_awaited, started.on_cutover_exit = True, 0
    assert _codes(started) == []
