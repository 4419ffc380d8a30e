"""No fence over brokers that do not serve (issue 30, finding 2).

With the stand-in, the brokers in migration mode register with it and fetch its log as Raft
observers. Once ZooKeeper is fenced, the cluster is only as healthy as the brokers that follow
the quorum: in issue 30's run the operator's signal came 54 s into an outage of every broker,
the fence went ahead (their ZooKeeper registrations had expired, so "every broker ZooKeeper
lists" was nobody) and only the check after the handoff saw it. So:

* the brokers the cutover waits for are those ZooKeeper lists now and those it listed when the
  mirror began (a broker that died meanwhile is still one the cluster needs);
* a broker serves when it is registered with the stand-in (unfenced, heartbeating) and fetched
  from it within `broker.session.timeout.ms` (`writers.BrokerServing`);
* at the signal (`--cutover manual`: Enter or SIGUSR1) a broker that does not serve makes the
  cutover refuse at once: the refusal names the brokers, nothing changes, mirroring goes on and
  the signal can be given again. With `--cutover now` the gate waits for them, at most
  `--broker-wait` (printed), then the run stops with nothing fenced (`BrokersNotServingError`,
  exit 3). `--fence-without-brokers` keeps the old way: once `--broker-wait` ran out it cuts
  over with a warning (and the run ends with exit 4, BROKERS_UNREGISTERED_AT_FENCE).

The status line shows each broker while mirroring (`brokers_line`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from migrate.errors import BrokersNotServingError
from writers import BrokerServing

__all__ = ["BrokerGate", "brokers_line", "not_serving_reason"]


def not_serving_reason(broker_id: int, seen: BrokerServing | None) -> str:
    """`broker 2 (not registered with the stand-in, not fetching)` and the like; a broker that
    registered but stays fenced says so (it has not caught up with the stand-in's log)."""
    if seen is None:
        return f"broker {broker_id} (not registered with the stand-in, not fetching)"
    unregistered = ("registered with the stand-in but fenced: not caught up with its log"
                    if seen.fenced else "not registered with the stand-in")
    why = [w for w, bad in ((unregistered, not seen.registered),
                            ("not fetching", not seen.fetching)) if bad]
    return f"broker {broker_id} ({'; '.join(why) if seen.fenced else ', '.join(why)})"


def brokers_line(brokers: Sequence[Mapping[str, Any]]) -> str:
    """The status line's brokers: `1:ok/lag 0 2:unregistered 3:not-fetching 4:fenced`."""
    parts = []
    for b in brokers:
        if not b["registered"]:
            state = "fenced" if b.get("fenced") else "unregistered"
        elif not b["fetching"]:
            state = "not-fetching"
        else:
            state = "ok" + ("" if b["lag"] is None else f"/lag {b['lag']}")
        parts.append(f"{b['broker_id']}:{state}")
    return " ".join(parts) or "none"


class BrokerGate:
    """The cutover's broker condition, asked by the mirror's gate.

    Args:
        serving: the quorum's `brokers_serving` (None: local voters, no broker registers).
        listed: the broker ids ZooKeeper lists now (the log's image).
        say: the run's message line.
        warn_once: a warning printed once per key.
        clock: monotonic seconds.
        broker_wait_s: `--broker-wait`.
        fence_without_brokers: `--fence-without-brokers`.
    """

    def __init__(self, *, serving: Callable[[], dict[int, BrokerServing] | None],
                 listed: Callable[[], Iterable[int]], say: Callable[[str], None],
                 warn_once: Callable[[str, str], None], clock: Callable[[], float],
                 clear_signal: Callable[[], None], broker_wait_s: float,
                 fence_without_brokers: bool) -> None:
        self._serving, self._listed, self._say, self._warn_once = serving, listed, say, warn_once
        self._clock, self._clear_signal = clock, clear_signal
        self._wait_s = broker_wait_s
        self._fence_anyway = fence_without_brokers
        self._at_start: set[int] | None = None  # what ZooKeeper listed when the mirror began
        self._wait_start: float | None = None

    def _expected(self) -> set[int]:
        listed = set(self._listed())
        if self._at_start is None:
            self._at_start = listed
        return self._at_start | listed

    def status(self) -> list[dict[str, object]] | None:
        """Each broker the cutover waits for, as the status line shows it (None: no stand-in)."""
        seen = self._serving()
        if seen is None:
            return None
        ids = sorted(self._expected() | set(seen))
        return [(seen[n] if n in seen else BrokerServing(n, False, False, None)).to_json()
                for n in ids]

    def not_serving(self) -> dict[int, str] | None:
        """Each expected broker that does not serve, with why ({} when all do; None: no
        stand-in)."""
        seen = self._serving()
        if seen is None:
            return None
        return {n: not_serving_reason(n, seen.get(n)) for n in sorted(self._expected())
                if n not in seen or not seen[n].serving}

    def open(self, *, manual: bool) -> tuple[bool, list[int]]:
        """Whether the cutover may fence now, and the brokers it fences over anyway.

        Args:
            manual: the operator's signal asked (refused at once, not waited on; the signal
                is cleared so that it can be given again).

        Returns:
            (True, []) every broker serves (or no stand-in); (False, []) refused or still
            waiting (mirroring goes on); (True, ids) `--fence-without-brokers` and
            `--broker-wait` ran out.

        Raises:
            BrokersNotServingError: `--cutover now`, and `--broker-wait` ran out (nothing
                fenced).
        """
        reasons = self.not_serving()
        if not reasons:
            if self._wait_start is not None:
                self._say("every broker is registered with the stand-in and fetching")
            self._wait_start = None
            return True, []
        named = "; ".join(reasons.values())
        now = self._clock()
        if manual and not self._fence_anyway:
            self._clear_signal()
            self._say(f"cutover refused: {named}. Nothing was fenced: ZooKeeper's controller "
                      "keeps running the cluster and mirroring goes on. Start the broker(s) "
                      "again in migration mode (or find why they do not reach the stand-in) and "
                      "give the signal again once they serve (the status line shows each "
                      "broker)")
            return False, []
        if self._wait_start is None:
            self._wait_start = now
            self._say(f"cutover waits for {named} to be registered with the stand-in and "
                      f"fetching (at most {self._wait_s:g}s, --broker-wait)")
        if now - self._wait_start < self._wait_s:
            return False, []
        if not self._fence_anyway:
            raise BrokersNotServingError(
                f"cutover not done: after --broker-wait {self._wait_s:g}s still {named}. "
                "Nothing was fenced: ZooKeeper's controller keeps running the cluster. Start "
                "the broker(s) again in migration mode, then run the same command again: "
                "within the controllers' controller.quorum.fetch.timeout.ms it resumes from the "
                "journal; later a controller leads the quorum without the stand-in and the "
                "re-run says how to start over. --fence-without-brokers cuts over even so")
        self._warn_once("brokers", f"WARNING: after --broker-wait {self._wait_s:g}s still "
                        f"{named} (are they in migration mode with controller.quorum.voters?); "
                        "cutting over as --fence-without-brokers asks: they must register "
                        "with the next controller")
        return True, sorted(reasons)
