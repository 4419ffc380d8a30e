"""The mirror phase: every ZooKeeper notification becomes a re-read and a delta, durable before
the next one is read, until the cutover's gate opens (docs/design/online-run.md)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from migrate.errors import BlockersFoundError
from migrate.online.broker_gate import BrokerGate
from migrate.online.fence_status import ZkFence, zk_lost
from migrate.online.phases.context import IGNORED, RunContext, SessionExpired
from migrate.translate.delta import delta_records
from writers import MetadataRecord, VoterUnavailableError
from writers import crash_point as _crash  # test-only hooks (writers/_faults.py)
from zkreader import ChangeEvent, ZkSessionExpiredError, ZkUnreachableError

__all__ = ["Delta", "Mirror"]


@dataclass(frozen=True, slots=True)
class Delta:
    """What one re-read found: the delta records, and whether they were applied to the log's
    image already (an expiry's whole-tree compare applies them as it goes), so the drain
    appends them without applying them again."""

    records: list[MetadataRecord]
    applied: bool = False


class Mirror:
    """Notifications in, deltas out, durable before the next: until the gate opens (the
    cutover is asked for, the mirror caught up, nothing ZooKeeper's controller must finish first,
    and with the stand-in every broker registered). The drain uses `pending`, `sync` and `delta`."""

    def __init__(self, c: RunContext) -> None:
        self.c = c
        self._rate: list[tuple[float, int]] = []  # (when, notifications) for changes/s
        self._last_lag = 0.0  # the oldest pending notification's age at the last step
        self.brokers = BrokerGate(
            serving=c.quorum.brokers_serving, listed=lambda: c.log.image.cluster.brokers,
            say=c.sink.say, warn_once=c.warn_once, clock=c.clock, clear_signal=c.trigger.clear,
            broker_wait_s=c.o.broker_wait_s, fence_without_brokers=c.o.fence_without_brokers)

    def until_cutover(self) -> None:
        """Mirror until the cutover is asked for (`now`, or the trigger) and the gate opens.

        Raises:
            ZkUnreachableError: ZooKeeper did not answer a read within --zk-timeout (the gate's
                after the signal too): the run stops before the fence, saying so.
        """
        try:
            self._until_cutover()
        except ZkUnreachableError as exc:
            raise zk_lost(exc, ZkFence.NOT_FENCED, journal=self.c.journal.path) from None

    def _until_cutover(self) -> None:
        start = self.c.clock()
        if self.c.o.cutover == "manual":
            self.c.sink.say("mirroring: press Enter (on a terminal) or send SIGUSR1 to pid "
                            f"{os.getpid()} to cut over")
        else:
            self.c.sink.say("mirroring until caught up, then cutting over")
        gate_start: float | None = None
        while True:
            events = self.pending()
            if not events and not self.c.zk.expired.is_set():
                first = self.c.zk.changes.get(timeout=0.05)
                if first is not None and not first.path.startswith(IGNORED):
                    events = [first, *self.pending()]
            self.step(events)
            self.c.sink.mirror(self._figures())
            asked = self.c.trigger.is_set()  # each turn: it also reads delivered signals
            wants_cutover = self.c.o.cutover == "now" or asked
            if not wants_cutover:
                gate_start = None  # a refused signal (broker_gate): the next one starts anew
                continue
            if gate_start is None:
                gate_start = self.c.clock()
                self.c.timings.took("mirror", start, gate_start)
                if self.c.o.cutover == "manual":  # the operator sees the signal was taken
                    self.c.sink.say("cutover asked: cutting over once the mirror is caught up")
            if self._gate_open(caught_up=not events, asked_for_s=self.c.clock() - gate_start):
                self.c.timings.took("gate", gate_start)
                self.c.sink.mirror_ended()
                return

    def pending(self) -> list[ChangeEvent]:
        """The notifications delivered so far, without those of paths the run itself owns."""
        events = self.c.zk.changes.drain()
        return [e for e in events if not e.path.startswith(IGNORED)]

    def step(self, events: list[ChangeEvent]) -> int:
        """Re-read (re-arming the watches), append the delta; returns records written."""
        forced = self.c.zk.expired.is_set()
        if not events and not forced:
            self._last_lag = 0.0
            return 0
        now = self.c.clock()
        if events:
            self._last_lag = now - min(e.at for e in events)
        try:
            delta = self.delta(events, watch=True).records
        except BlockersFoundError as exc:  # a topic reusing another's id (refuse_reused_topic_ids)
            raise BlockersFoundError(f"{exc} Stopped before the fence: ZooKeeper was not "
                                     "changed and its controller keeps running.") from None
        _crash("mirror_append")
        self.c.out.mirrored_records += len(delta)
        self.c.out.mirror_steps += 1
        self.c.out.changes_seen += len(events)
        self._rate.append((self.c.clock(), len(events)))
        return len(delta)

    def delta(self, events: list[ChangeEvent], *, watch: bool, append: bool = True,
              patience_s: float = 30.0) -> Delta:
        """Re-read what the events name (watches re-armed) and append the delta, durably.

        After a session expiry the watches are gone and nobody knows what changed while they
        were: the whole tree is re-read and compared by record identity instead.

        Args:
            patience_s: how long the re-read retries a lost connection (at least --zk-timeout):
                the mirror rides out a ZooKeeper restart, the drain (the cluster may have no
                controller) gives up after --zk-timeout.
        """
        if self.c.zk.expired.is_set():
            snapshot = self.c.read(watch=watch)
            delta = self.c.resync_delta(snapshot).records
            if delta:
                self.c.log.apply(delta)  # the image and the framing (SCRAM removals) alike
                if append:
                    self.c.quorum.append_records(delta, timestamp_ms=self.c.ts(snapshot))
                    self.c.journal.save(last_durable_offset=self.c.quorum.durable_offset)
            self.c.sink.say(f"re-read the whole tree after the session expiry: {len(delta)} "
                            "record(s) of difference")
            return Delta(delta, applied=bool(delta))
        self.c.absorb_quorum_records()
        try:
            keys = self._retrying(lambda: self.c.zk.changed_entities(
                [e.path for e in events], watch=watch), patience_s)
            if not keys:
                return Delta([])
            part = self._retrying(lambda: self.c.zk.read_entities(keys, watch=watch), patience_s)
        except SessionExpired:
            return self.delta(events, watch=watch)  # the whole-tree branch above (appends)
        result = delta_records(self.c.log.image, part, keys, self.c.topts)
        for b in result.blockers:
            self.c.warn_once(f"blocker:{b.code}:{b.path}", f"WARNING: {b.code} at {b.path}: "
                             f"{b.message} (left out of the log)")
        if append:
            self.c.append(result.records, part)
        else:
            self.c.ts(part)
        return Delta(result.records)

    def sync(self) -> None:
        """`sync()` before the drain's reads, then every notification that came before its
        reply delivered to the change feed (kazoo runs watch callbacks on another thread); a
        session that expired meanwhile is noted (the drain then compares the whole tree) and
        the new session is synced instead."""
        for _ in range(2):
            try:
                self.c.zk.sync("/")  # at most --zk-timeout: ZkUnreachableError after
                self.c.zk.run_queued_watch_callbacks()
                return
            except ZkSessionExpiredError:
                self.c.zk.expired.set()
                self.c.sleep(0.2)
        self.c.zk.sync("/")
        self.c.zk.run_queued_watch_callbacks()

    def _retrying(self, fn: Callable[[], Any], patience_s: float) -> Any:
        """Entity reads survive connection losses (the feed re-arms the watches) for
        `patience_s` (each read is itself bounded by --zk-timeout)."""
        deadline = self.c.clock() + max(self.c.zk.retry_s, patience_s)
        while True:
            try:
                return fn()
            except ZkUnreachableError as exc:
                if self.c.zk.expired.is_set() or isinstance(exc, ZkSessionExpiredError):
                    self.c.zk.expired.set()
                    raise SessionExpired() from exc
                if self.c.clock() > deadline:
                    raise
                self.c.sleep(0.2)

    def _changes_per_s(self) -> float:
        """Notifications a second over the last 5 s."""
        now = self.c.clock()
        self._rate = [(t, n) for t, n in self._rate if now - t <= 5.0]
        return sum(n for _, n in self._rate) / 5.0

    def _figures(self) -> dict[str, Any]:
        return {"records_mirrored": self.c.out.mirrored_records,
                "changes_per_s": self._changes_per_s(),
                "lag_s": self._last_lag, "last_offset": self.c.quorum.last_offset,
                "voters": self.c.voters(), "steps": self.c.out.mirror_steps,
                "zookeeper": self.c.zk.state,
                "brokers": self.brokers.status()}

    def _gate_open(self, *, caught_up: bool, asked_for_s: float) -> bool:
        """Whether the cutover may fence now.

        Args:
            caught_up: the last step found no notification waiting.
            asked_for_s: how long ago the cutover was asked (`now`: since the mirror began).
        """
        if not self.c.quorum.majority_writable:
            raise VoterUnavailableError(
                "a majority of voters is no longer writable: stopping before the fence "
                "(ZooKeeper was not changed; its controller keeps running)")
        bound, wait = self.c.o.lag_bound_s, self.c.o.lag_wait_s
        if not caught_up and self._last_lag > bound:
            # Under steady changes a step that takes longer than the bound (a loaded host)
            # leaves the mirror behind for good: the wait for it is bounded too.
            if asked_for_s < wait:
                self.c.warn_once("lag", f"cutover waits: the mirror lags {self._last_lag:.1f}s "
                                 f"behind ZooKeeper (it cuts over once within {bound:g}s of it, "
                                 f"or after {wait:g}s even so)")
                return False
            self.c.warn_once("lag-over", f"WARNING: {wait:g}s after the cutover was asked the "
                             f"mirror is still more than {bound:g}s behind ZooKeeper "
                             f"({self._changes_per_s():.0f} changes/s): cutting over behind it; "
                             "the drain reads what it had not mirrored, inside the window")
        events = self.c.zk.get_children("/log_dir_event_notification") or []
        if events:
            self.c.warn_once("logdir", f"cutover waits: {len(events)} unprocessed "
                             "/log_dir_event_notification event(s) (the ZooKeeper controller "
                             "must handle them first)")
            return False
        if self.c.zk.get("/admin/reassign_partitions") is not None:
            self.c.warn_once("reassign", "WARNING: cutover waits for /admin/reassign_partitions "
                             "(a reassignment submitted the ZooKeeper way) to finish")
            return False
        return self._brokers_registered()

    def _brokers_registered(self) -> bool:
        """With the stand-in: every broker ZooKeeper lists (or listed when the mirror began)
        is registered with it and fetching (`migrate.online.broker_gate`); Kafka's own
        migration waits for the brokers in WAIT_FOR_BROKERS too."""
        self.c.absorb_quorum_records()
        ok, over = self.brokers.open(manual=self.c.o.cutover == "manual")
        if ok:
            self.c.out.brokers_unregistered = over
        return ok
