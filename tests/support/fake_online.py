"""In-memory stand-ins for what the online run talks to, so its driver and phases run in
milliseconds with no ZooKeeper and no voter disks (tests/unit/migrate/test_online_driver.py).

- `FakeZooKeeper`: the run's `ZooKeeper` interface over one tree (a `ClusterSnapshot`) and the
  three znodes the fence is about, kept the way ZooKeeper keeps them: the fence multi-op checks
  `/controller_epoch` and `/migration` at their versions and bumps both, a later `/migration`
  write checks the fence's epoch version, and a write that finds exactly its own state already
  there reads back as applied (as `zkreader.write_migration_state` does).
- `FakeQuorum`: a `QuorumLog` that keeps what is appended in memory (local voters: no brokers
  register, `resign` returns None).
- `Crash`: what a fake raises at a chosen point to stop the run as a kill -9 would there (a
  `BaseException`, so no `except Exception` in the run catches it); the fakes keep their state,
  so a second run over them is the re-run.
- `FakeClock`: monotonic and wall time that move only when the run sleeps or a test says.

Nothing here is taken from the code under test; the ZooKeeper semantics are ZooKeeper's
(versions, multi-op atomicity) and the claim's bytes are Kafka's (`zkreader.claim_json`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from migrate.online.phases.context import Clocks
from writers import (
    AppendResult,
    ControlRecord,
    EncodedBatch,
    MetadataRecord,
    MetadataVersion,
    VoterStatus,
    VoterUnavailableError,
)
from zkreader import (
    ChangeEvent,
    ClusterSnapshot,
    ControllerMovedError,
    ControllerZnode,
    EntityKey,
    FenceState,
    FenceToken,
    MigrationMovedError,
    MigrationState,
    ZkUnreachableError,
    ZnodeStat,
    claim_json,
)

__all__ = ["Crash", "FakeClock", "FakeQuorum", "FakeZooKeeper"]

MIGRATION_ABSENT = -1  # "/migration does not exist" as the fence's version check says it


class Crash(BaseException):
    """The process died here (kill -9): nothing after this point ran."""


@dataclass
class FakeClock:
    """Monotonic seconds and wall seconds that advance only through `sleep` or `advance`."""

    now: float = 1000.0
    wall_now: float = 1_700_000_000.0

    def monotonic(self) -> float:
        self.now += 0.001  # every reading a millisecond apart: durations are never zero
        return self.now

    def wall(self) -> float:
        return self.wall_now + (self.now - 1000.0)

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def clocks(self) -> Clocks:
        return Clocks(monotonic=self.monotonic, wall=self.wall, sleep=self.sleep)


class FakeFeed:
    """The change feed: notifications a test queued, handed out oldest first, never waiting."""

    def __init__(self) -> None:
        self.queued: list[ChangeEvent] = []

    def get(self, timeout: float | None = None) -> ChangeEvent | None:
        return self.queued.pop(0) if self.queued else None

    def drain(self) -> list[ChangeEvent]:
        out, self.queued = self.queued, []
        return out


def _stat(version: int) -> ZnodeStat:
    return ZnodeStat(czxid=1, mzxid=1, version=version, ctime_ms=1, mtime_ms=2)


@dataclass
class FakeZooKeeper:
    """One ZooKeeper ensemble as the run sees it (module docstring).

    Attributes:
        tree: what a whole-tree read returns.
        changed: path -> the entity keys a notification of it names (`changed_entities`).
        controller / controller_epoch / epoch_version / migration / migration_version: the
            fence's three znodes (`/controller` holds a ZooKeeper broker's claim at first).
        crash_at: a point at which to raise `Crash`: "fence" (before the multi-op is sent),
            "fence_applied" (after it applied, its reply never read), "migration" (before
            `/migration` is written), "migration_applied" (after), "gate" (while the mirror
            asks whether it may cut over), "read_back" (the re-run's read-back).
        unreachable_at: the same points, raising `ZkUnreachableError` instead (ZooKeeper stopped
            answering; "fence_sent": the fence was sent and no reply came).
        takeover_at_handoff: a KRaft controller claims `/controller` (epoch + 1) once the
            handoff starts waiting.
        hooks: point -> what happens in ZooKeeper right then (the points of `crash_at`, and
            "sync": the drain's `sync()`), before any crash there.
    """

    tree: ClusterSnapshot
    changed: dict[str, list[EntityKey]] = field(default_factory=dict)
    controller: bytes | None = b'{"version":1,"brokerid":1,"timestamp":"1"}'
    controller_ephemeral: bool = True
    controller_epoch: int = 5
    epoch_version: int = 4
    migration: bytes | None = None
    migration_version: int = MIGRATION_ABSENT
    crash_at: str | None = None
    unreachable_at: str | None = None
    takeover_at_handoff: bool = False
    hooks: dict[str, Callable[[], None]] = field(default_factory=dict)
    retry_s: float = 1.0
    expired: threading.Event = field(default_factory=threading.Event)
    changes: FakeFeed = field(default_factory=FakeFeed)
    fences_sent: int = 0
    migration_writes: int = 0
    whole_reads: int = 0
    syncs: int = 0
    state: str = "CONNECTED"

    def _point(self, name: str) -> None:
        hook = self.hooks.pop(name, None)  # once
        if hook is not None:
            hook()
        if self.crash_at == name:
            raise Crash(name)
        if self.unreachable_at == name:
            raise ZkUnreachableError(f"ZooKeeper did not answer ({name})")

    # -- the session's own calls ------------------------------------------------------------

    def get(self, path: str) -> tuple[bytes, ZnodeStat] | None:
        if path == "/migration":
            return None if self.migration is None else (self.migration,
                                                         _stat(self.migration_version))
        return None  # no /admin/reassign_partitions

    def get_children(self, path: str) -> list[str] | None:
        self._point("gate")
        return []  # no /log_dir_event_notification events

    def sync(self, path: str = "/") -> None:
        self.syncs += 1
        self._point("sync")

    def run_queued_watch_callbacks(self) -> None:
        pass

    # -- zkreader's reads -------------------------------------------------------------------

    def read_cluster(self, *, watch: bool) -> ClusterSnapshot:
        self._point("whole_read")
        self.whole_reads += 1
        return replace(self.tree, migration=None) if self.migration is None else self.tree

    def changed_entities(self, paths: Iterable[str], *, watch: bool) -> list[EntityKey]:
        return [k for p in paths for k in self.changed.get(p, [])]

    def read_entities(self, keys: Iterable[EntityKey], *, watch: bool) -> ClusterSnapshot:
        return self.tree  # the keys' entities are read from it (the rest is not looked at)

    # -- the fence and /migration ------------------------------------------------------------

    def fence(self, *, kraft_controller_id: int, kraft_epoch: int, timestamp_ms: int,
              migration_version: int, on_sent: Callable[[], None]) -> FenceToken:
        self._point("fence")
        on_sent()
        self.fences_sent += 1
        if self.unreachable_at == "fence_sent":
            raise ZkUnreachableError("ZooKeeper did not answer the fence")
        if self.controller is not None and not self.controller_ephemeral:
            raise ControllerMovedError("a KRaft controller holds /controller")
        if migration_version != self.migration_version:
            raise MigrationMovedError(f"/migration is at version {self.migration_version}, "
                                      f"not {migration_version}: nothing applied")
        claim = claim_json(kraft_controller_id, kraft_epoch, timestamp_ms)
        self.controller, self.controller_ephemeral = claim, False
        # a whole-tree read sees the KRaft claim from now on (a persistent /controller)
        self.tree = replace(self.tree, controller=ControllerZnode(
            kraft_controller_id, 2, timestamp_ms, kraft_epoch,
            ZnodeStat(czxid=9, mzxid=9, version=0, ctime_ms=1, mtime_ms=2, ephemeral_owner=0)))
        self.controller_epoch += 1
        self.epoch_version += 1
        self.migration = b"{}" if self.migration is None else self.migration
        self.migration_version += 1
        self._point("fence_applied")
        return FenceToken(self.controller_epoch, self.epoch_version, self.migration_version,
                          claim)

    def read_fence_state(self, *, synced: bool = False,
                         timeout_s: float | None = None) -> FenceState:
        if timeout_s is not None and self.takeover_at_handoff:  # the handoff's wait
            self.controller = b'{"version":2,"brokerid":3001,"timestamp":"9",' \
                              b'"kraftControllerEpoch":2}'
        self._point("read_back")
        return FenceState(self.controller_epoch, self.epoch_version, self.controller, 0,
                          self.controller_ephemeral, self.migration,
                          None if self.migration is None else self.migration_version)

    def write_migration_state(self, token: FenceToken, state: MigrationState) -> int:
        self._point("migration")
        data = (f'{{"kraft_controller_id":{state.kraft_controller_id},'
                f'"kraft_metadata_offset":{state.kraft_metadata_offset}}}').encode()
        if self.migration == data:
            return self.migration_version  # an earlier write of exactly this: applied
        if token.epoch_zk_version != self.epoch_version:
            raise ControllerMovedError("/controller_epoch moved")
        if token.migration_zk_version != self.migration_version:
            raise MigrationMovedError("/migration moved")
        self.migration, self.migration_version = data, self.migration_version + 1
        self.migration_writes += 1
        self._point("migration_applied")
        return self.migration_version


@dataclass
class _Batch:
    records: list[MetadataRecord | ControlRecord]


@dataclass
class FakeQuorum:
    """Local voters kept in memory (module docstring).

    Attributes:
        batches: every append, oldest first (a re-run's `read_log`).
        crash_after: raise `Crash` once an append holding a record of this type is durable.
        unavailable_on: raise `VoterUnavailableError` for an append holding a record of this
            type (nothing appended).
        crash_on_resign: raise `Crash` when the run gives the quorum up.
        writable: `majority_writable`.
    """

    batches: list[_Batch] = field(default_factory=list)
    crash_after: str | None = None
    unavailable_on: str | None = None
    crash_on_resign: bool = False
    writable: bool = True
    resigned: int = 0
    closed: bool = False

    @property
    def leader_epoch(self) -> int:
        return 1

    @property
    def next_offset(self) -> int:
        return sum(len(b.records) for b in self.batches)

    @property
    def last_offset(self) -> int:
        return self.next_offset - 1

    @property
    def durable_offset(self) -> int:
        return self.last_offset

    @property
    def majority_writable(self) -> bool:
        return self.writable

    def records(self) -> list[MetadataRecord | ControlRecord]:
        return [r for b in self.batches for r in b.records]

    def append_records(self, records: Sequence[MetadataRecord | ControlRecord], *,
                       timestamp_ms: int) -> AppendResult:
        types = {r.type for r in records if isinstance(r, MetadataRecord)}
        if self.unavailable_on in types:
            raise VoterUnavailableError("a majority of voters could not be written")
        base = self.next_offset
        self.batches.append(_Batch(list(records)))
        if self.crash_after in types:
            point, self.crash_after = self.crash_after, None  # once
            raise Crash(f"after the append of {point}")
        return AppendResult(base, self.last_offset, 1)

    def append_batches(self, batches: Sequence[EncodedBatch]) -> AppendResult:
        raise AssertionError("the online run appends records, not encoded batches")

    def voter_status(self) -> list[VoterStatus]:
        return []

    def read_log(self) -> Iterator[Any]:
        return iter(list(self.batches))

    def close(self) -> None:
        self.closed = True

    def take_own_records(self) -> list[MetadataRecord]:
        return []

    def serve_brokers(self, mv: MetadataVersion) -> None:
        pass

    def broker_registrations(self) -> dict[int, tuple[int, bool]] | None:
        return None

    def brokers_serving(self) -> None:
        return None

    def describe_quorum(self, node: int) -> tuple[int, dict[int, int]]:
        raise VoterUnavailableError("local voters answer no DescribeQuorum")

    def resign(self, *, timeout_s: float) -> None:
        if self.crash_on_resign:
            self.crash_on_resign = False
            raise Crash("resign")
        self.resigned += 1
        return None
