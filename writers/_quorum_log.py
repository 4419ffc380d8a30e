"""The quorum writer interface the online migration writes through, and its local-directory form.

`QuorumLog` is the only thing the mirror and the cutover see of the KRaft quorum: they append
records (or ready-made batches), learn which offset is durable on a majority, and read the leader
epoch and the last offset. They never open a voter file, and never ask which transport it is:
what only a led quorum does (brokers registering with it, a handover) is in the protocol too,
answered by the local form with "nothing" (no records of its own, no registrations, closing
instead of resigning). Two transports implement it:

* `LocalVoterQuorum` (here): the voters' `metadata.log.dir`s on this host. Every batch is written
  to the *live* logs (no staging) by `QuorumWriter`, identical bytes on every voter, fsync'd, and
  `append_*` returns once a majority has it on disk. The voters' `.lock` files are held from
  `open` to `close`, so no controller can start on a log that is still being written.
* the stand-in Raft voter (`writers.StandInLeader`; docs/design/standin.md):
  zk2kraft leads real controllers through Kafka's Raft RPCs; "durable" then means committed
  (the high watermark passed it).

Why appends are synchronous: the cutover's window ends when the final batch is durable on a
majority (t1), and every mirror step must be durable before the next notification is read, so
nothing is gained by letting callers race ahead of durability; a transport may pipeline inside
one call.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from writers._mv import MetadataVersion
from writers.codec.batch import batch_records
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.errors import VoterStateError, VoterUnavailableError
from writers.log.log_dir import EncodedBatch, VoterDir
from writers.log.quorum import QuorumWriter
from writers.log.reader import open_log_source

__all__ = [
    "AppendResult",
    "BrokerServing",
    "Handover",
    "HandoverStep",
    "LocalVoterQuorum",
    "QuorumLog",
    "TailRepair",
    "VoterStatus",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Where an append landed: offsets `base_offset..last_offset`, durable on a majority."""

    base_offset: int
    last_offset: int
    batches: int


@dataclass(frozen=True, slots=True)
class VoterStatus:
    """One voter as the live status and the report show it.

    Attributes:
        node_id: the voter's id.
        state: "ok" (being written), "failed" (dropped; see `error`).
        next_offset: the offset its log ends before, as far as the writer knows.
        error: why it was dropped (None while ok).
    """

    node_id: int
    state: str
    next_offset: int | None
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        """The report's form."""
        return {"node_id": self.node_id, "state": self.state, "next_offset": self.next_offset,
                "error": self.error}


@dataclass(frozen=True, slots=True)
class BrokerServing:
    """One broker as the stand-in sees it while mirroring: registered, fetching, how far behind.

    Attributes:
        broker_id: the broker's id.
        registered: registered with the stand-in, unfenced, and heard from (heartbeat) within
            `broker.session.timeout.ms` (Kafka's `hasValidSession`).
        fetching: it fetched `__cluster_metadata`-0 from the stand-in, as a Raft observer, in
            the stand-in's epoch within `broker.session.timeout.ms` (its long poll asks
            about twice a second).
        lag: records between its last fetch offset and the stand-in's log end (None: no fetch
            in this epoch yet).
        fenced: it registered and is heard from, but its registration stays fenced: Kafka
            unfences a broker only once its metadata offset reaches its registration's, so it
            has not caught up with the stand-in's log (`registered` is then False).
    """

    broker_id: int
    registered: bool
    fetching: bool
    lag: int | None
    fenced: bool = False

    @property
    def serving(self) -> bool:
        """Registered and fetching: what the cutover requires of every broker."""
        return self.registered and self.fetching

    def to_json(self) -> dict[str, object]:
        """The status line's and the report's form."""
        return {"broker_id": self.broker_id, "registered": self.registered,
                "fetching": self.fetching, "lag": self.lag, "fenced": self.fenced}


class HandoverStep(Protocol):
    """One message of a handover (the stand-in's `HandoverEvent`), as the report shows it."""

    def to_json(self) -> dict[str, object]:
        """The report's form."""
        ...


class Handover(Protocol):
    """How leadership passed to a real controller (the stand-in's `HandoverResult`)."""

    @property
    def new_leader(self) -> int:
        """The node that announced itself, or -1 if none did in time."""
        ...

    @property
    def new_epoch(self) -> int:
        """Its epoch."""
        ...

    @property
    def elapsed_ms(self) -> float:
        """From resigning to the new leader announcing itself."""
        ...

    @property
    def fetches_answered(self) -> int:
        """Fetch requests answered while resigning."""
        ...

    @property
    def events(self) -> Sequence[HandoverStep]:
        """Every message of the handover, in order."""
        ...


@runtime_checkable
class QuorumLog(Protocol):
    """The quorum writer interface (see the module docstring for who implements it)."""

    @property
    def leader_epoch(self) -> int:
        """The epoch every batch is written in (partitionLeaderEpoch)."""
        ...

    @property
    def next_offset(self) -> int:
        """The offset the next appended record gets."""
        ...

    @property
    def last_offset(self) -> int:
        """Offset of the log's last record (-1 for an empty log)."""
        ...

    @property
    def durable_offset(self) -> int:
        """The highest offset durable on a majority (-1 for none)."""
        ...

    @property
    def majority_writable(self) -> bool:
        """True while a majority of voters can still be written."""
        ...

    def append_records(
        self, records: Sequence[MetadataRecord | ControlRecord], *, timestamp_ms: int
    ) -> AppendResult:
        """Frame `records` into batches at `next_offset` and return once durable on a majority.

        Raises:
            VoterUnavailableError: fewer than a majority could make them durable (exit 3).
        """
        ...

    def append_batches(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        """Append ready-made batches (they must start at `next_offset`); durable on return."""
        ...

    def voter_status(self) -> list[VoterStatus]:
        """Every voter's state, for the live status and the report."""
        ...

    def read_log(self) -> Iterator[RecordBatch]:
        """The batches the quorum holds, oldest first (a resume replays them)."""
        ...

    def close(self) -> None:
        """Finish queued writes and release the voters (their locks)."""
        ...

    # -- what only a led quorum does; the local form answers "nothing" ---------------------------

    def take_own_records(self) -> list[MetadataRecord]:
        """Records the quorum appended on its own (broker registrations and fencing changes)
        since the last call, in log order, for the single writer's image."""
        ...

    def serve_brokers(self, mv: MetadataVersion) -> None:
        """Start taking the brokers' registrations and heartbeats (once the pre-copy is
        committed)."""
        ...

    def broker_registrations(self) -> dict[int, tuple[int, bool]] | None:
        """broker id -> (broker epoch, live) as registered with the quorum; None when brokers
        do not register with it (they register with the controllers that start after it)."""
        ...

    def brokers_serving(self) -> dict[int, BrokerServing] | None:
        """Every broker registered with the quorum or fetching from it, by id; None when
        brokers do not register with it (they register with the controllers started after
        it)."""
        ...

    def describe_quorum(self, node: int) -> tuple[int, dict[int, int]]:
        """DescribeQuorum to voter `node`: the leader it names and each observer's
        LastFetchTimestamp.

        Raises:
            VoterUnavailableError: `node` did not answer, or answered with an error.
        """
        ...

    def resign(self, *, timeout_s: float) -> Handover | None:
        """Stop writing so that a real controller leads: a led quorum resigns (EndQuorumEpoch)
        and returns who leads now; local voters finish their queued writes and close (the
        controllers elect a leader when they start on them), returning None."""
        ...


@dataclass(frozen=True, slots=True)
class TailRepair:
    """What opening the quorum changed in a voter's log after a crash (always reported).

    Attributes:
        node_id: the voter.
        action: "truncated" (offsets never durable on a majority were removed) or "caught up"
            (batches the majority held were copied in).
        first_offset / last_offset: the offsets affected.
    """

    node_id: int
    action: str
    first_offset: int
    last_offset: int

    def describe(self) -> str:
        """One line for the terminal and the log."""
        return (f"voter {self.node_id}: {self.action} offsets {self.first_offset}.."
                f"{self.last_offset}")


class LocalVoterQuorum:
    """`QuorumLog` over local voter directories, written live (not staged).

    Args:
        voters: (node id, metadata.log.dir) pairs; the first is quorum-state's leader.
        cluster_id: ZooKeeper's `/cluster/id` (checked against existing meta.properties).
        leader_epoch: the epoch to write batches in (an existing log's last epoch must not be
            higher).

    Opening reconciles the voters after a crash: a log longer than what a majority holds is cut
    back to the majority's end (those offsets were never acknowledged), a shorter one is caught
    up from a voter that holds the batches; each change is listed in `repairs`.

    Raises:
        VoterUnavailableError: a directory cannot be opened or its `.lock` is held (exit 3).
        VoterStateError / LogCorruptionError: a directory holds something else or is damaged.
    """

    def __init__(
        self, voters: Sequence[tuple[int, Path]], *, cluster_id: str, leader_epoch: int
    ) -> None:
        if not voters:
            raise ValueError("a quorum needs at least one voter")
        self._epoch = leader_epoch
        self._ids = [n for n, _ in voters]
        self._dirs: list[VoterDir] = []
        self.repairs: list[TailRepair] = []
        try:
            for node_id, path in voters:
                self._dirs.append(VoterDir(Path(path), node_id=node_id, cluster_id=cluster_id,
                                           recover_tail=True))
            self._reconcile()
            for d in self._dirs:
                last_epoch = d.epochs[-1][0] if d.epochs else 0
                if last_epoch > leader_epoch:
                    raise VoterStateError(
                        f"voter {d.node_id} ({d.path}): its log is at leader epoch {last_epoch}, "
                        f"above the epoch {leader_epoch} this run writes in: a controller has "
                        "already led this log"
                    )
            for d in self._dirs:
                d.write_quorum_state(leader_epoch=leader_epoch, voters=self._ids,
                                     leader_id=self._ids[0])
            self._writer = QuorumWriter(self._dirs)
        except BaseException:
            for d in self._dirs:
                d.close()
            raise

    def _reconcile(self) -> None:
        ends = sorted((d.next_offset for d in self._dirs), reverse=True)
        majority = len(self._dirs) // 2 + 1
        target = ends[majority - 1]  # the highest end a majority reaches
        for d in self._dirs:
            if d.next_offset > target:
                first, last = target, d.next_offset - 1
                d.truncate_to(target)
                self.repairs.append(TailRepair(d.node_id, "truncated", first, last))
        for d in self._dirs:
            if d.next_offset < target:
                donor = next(x for x in self._dirs if x.next_offset == target)
                first = d.next_offset
                for b in donor.batches_from(first):
                    d.append(b)
                self.repairs.append(TailRepair(d.node_id, "caught up", first, target - 1))
        for r in self.repairs:
            log.warning("opening the quorum after a crash: %s", r.describe())

    # -- QuorumLog -------------------------------------------------------------------------------

    @property
    def leader_epoch(self) -> int:
        """See `QuorumLog`."""
        return self._epoch

    @property
    def next_offset(self) -> int:
        """See `QuorumLog`."""
        return self._writer.next_offset

    @property
    def last_offset(self) -> int:
        """See `QuorumLog`."""
        return self._writer.next_offset - 1

    @property
    def durable_offset(self) -> int:
        """See `QuorumLog`: appends return only once durable, so this is the last offset."""
        return self._writer.next_offset - 1

    @property
    def majority_writable(self) -> bool:
        """See `QuorumLog`."""
        return len(self._writer.live_voters) >= self._writer.majority

    def append_records(
        self, records: Sequence[MetadataRecord | ControlRecord], *, timestamp_ms: int
    ) -> AppendResult:
        """See `QuorumLog`."""
        pairs = batch_records(records, base_offset=self.next_offset, leader_epoch=self._epoch,
                              timestamp_ms=timestamp_ms)
        return self.append_batches(
            [EncodedBatch(b.base_offset, b.last_offset, b.leader_epoch, data)
             for b, data in pairs])

    def append_batches(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        """See `QuorumLog`."""
        if not batches:
            return AppendResult(self.next_offset, self.next_offset - 1, 0)
        base = batches[0].base_offset
        for b in batches:
            if b.leader_epoch != self._epoch:
                raise VoterStateError(
                    f"batch at offset {b.base_offset} has leader epoch {b.leader_epoch}, the "
                    f"quorum writes epoch {self._epoch}")
            self._writer.append_encoded(b)
        return AppendResult(base, batches[-1].last_offset, len(batches))

    def voter_status(self) -> list[VoterStatus]:
        """See `QuorumLog`."""
        failed = {f.node_id: f for f in self._writer.failures}
        out = []
        for d in self._dirs:
            f = failed.get(d.node_id)
            if f is None:
                out.append(VoterStatus(d.node_id, "ok", d.next_offset))
            else:
                out.append(VoterStatus(d.node_id, "failed", f.offset, f.error))
        return out

    def read_log(self) -> Iterator[RecordBatch]:
        """See `QuorumLog`: decoded from the first voter still written (all hold the same)."""
        live = set(self._writer.live_voters)
        d = next(x for x in self._dirs if x.node_id in live)
        for entry in open_log_source(d.path).entries():
            yield entry.batch

    def close(self) -> None:
        """See `QuorumLog`."""
        self._writer.close()

    def take_own_records(self) -> list[MetadataRecord]:
        """See `QuorumLog`: only this process writes local voters, so there are none."""
        return []

    def serve_brokers(self, mv: MetadataVersion) -> None:
        """See `QuorumLog`: brokers register with the controllers started after the run."""

    def broker_registrations(self) -> dict[int, tuple[int, bool]] | None:
        """See `QuorumLog`: None, brokers do not register with local voters."""
        return None

    def brokers_serving(self) -> dict[int, BrokerServing] | None:
        """See `QuorumLog`: None, brokers do not register with local voters."""
        return None

    def describe_quorum(self, node: int) -> tuple[int, dict[int, int]]:
        """See `QuorumLog`: local voters are files, and no voter answers for them."""
        raise VoterUnavailableError(f"voter {node} is a local directory: it answers no "
                                    "DescribeQuorum until a controller starts on it")

    def resign(self, *, timeout_s: float) -> Handover | None:
        """See `QuorumLog`: nobody leads local voters while zk2kraft writes them; `close`, so
        the controllers can start on them. None: no handover to report."""
        self.close()
        return None

    def __enter__(self) -> LocalVoterQuorum:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

