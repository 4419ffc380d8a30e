"""BrokerRegistration (62) and BrokerHeartbeat (63) for migrating ZooKeeper-mode brokers.

Why: brokers in migration mode (`zookeeper.metadata.migration.enable=true`) are Raft observers
and register with whoever leads the KRaft quorum. If the stand-in does not take their
registrations they register only after the handover, with new incarnations, while the new
controller already sends UpdateMetadata/LeaderAndIsr, and it repeats that round as they arrive
(docs/design/standin.md, "Brokers register with the stand-in"). Registered in the stand-in's
log, they keep their broker epoch across the handover.

The decisions follow Kafka 3.9's active controller (`ClusterControlManager.registerBroker`,
`BrokerHeartbeatManager.calculateNextBrokerState`, `ReplicationControlManager.
processBrokerHeartbeat`, `QuorumController.registerBroker`; facts, not code):

* **Registration**: the cluster id must match (INCONSISTENT_CLUSTER_ID); a registered broker
  with a live session and another incarnation id is DUPLICATE_BROKER_REGISTRATION; only
  migrating ZooKeeper brokers are taken (a KRaft broker in pre-migration is
  BROKER_ID_NOT_REGISTERED); from metadata.version 3.7-IV2 the log dirs must be present, not
  reserved and not duplicated, nor another broker's (INVALID_REGISTRATION); every feature range
  the broker sends must hold the finalized level (default 1 for metadata.version, 0 otherwise),
  and every finalized feature above 0 must be sent (UNSUPPORTED_VERSION). The record is a
  `RegisterBrokerRecord` of the level's version with the request's listeners, features, rack and
  (from 3.7-IV2) log dirs; a new incarnation is fenced and its broker epoch is the offset of
  that record; the same incarnation again keeps epoch, fencing and controlled-shutdown state.
* **Heartbeat**: no registration, or another epoch, is STALE_BROKER_EPOCH; `isCaughtUp` is
  `currentMetadataOffset >= offset of the broker's last RegisterBrokerRecord`; a fenced broker
  that does not want fencing and is caught up is unfenced with `BrokerRegistrationChangeRecord`
  (fenced = -1); an unfenced one that wants fencing is fenced (fenced = 1); `wantShutDown` is
  granted at once (`shouldShutDown`) and fences.
* **Session expiry** (`fence_stale`, Kafka's `ReplicationControlManager.maybeFenceOneStaleBroker`
  and `BrokerHeartbeatManager.findOneStaleBroker`/`hasValidSession`): an unfenced broker not
  heard from for more than `broker.session.timeout.ms` is fenced with
  `BrokerRegistrationChangeRecord` v0 (fenced = 1, its epoch), one broker per call, the one
  heard from longest ago first. A session starts at its last heartbeat, or for a registration
  already unfenced in the log when the stand-in started serving brokers, at that start
  (`activate`; Kafka's controller touches every registration when it activates). Its next
  heartbeat answers `isFenced` until it is caught up, then unfences it, as above.

Deliberately not done, because until the cutover ZooKeeper's controller runs the partitions
and the mirror copies its decisions: no PartitionChangeRecord on (un)fencing (Kafka's
`handleBrokerUnfenced` elects leaders for leaderless partitions, `handleBrokerFenced` shrinks
ISRs and moves leaders off the broker); no controlled-shutdown state (a ZK-mode broker asks the
KRaft controller only once its cached controller is a KRaft one, i.e. after the handover).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from writers._mv import MetadataVersion, record_version
from writers.codec.records import MetadataRecord
from writers.codec.wire import uuid_to_bytes
from writers.raft.errors import (
    BROKER_ID_NOT_REGISTERED,
    DUPLICATE_BROKER_REGISTRATION,
    INCONSISTENT_CLUSTER_ID,
    INVALID_REGISTRATION,
    NONE,
    STALE_BROKER_EPOCH,
    UNSUPPORTED_VERSION,
)

__all__ = ["BrokerRegistry", "Outcome"]

METADATA_VERSION = "metadata.version"
KRAFT_VERSION = "kraft.version"
FENCE, UNFENCE = 1, -1  # BrokerRegistrationFencingChange


@dataclass
class _Broker:
    """A registration as the log holds it, plus the session the stand-in keeps for it."""

    epoch: int
    incarnation_id: str
    record_offset: int  # offset of its last RegisterBrokerRecord (Kafka's isCaughtUp bar)
    fenced: bool
    in_controlled_shutdown: bool = False
    log_dirs: tuple[str, ...] = ()
    last_contact_ms: float | None = None  # None: no heartbeat to the stand-in yet


@dataclass(frozen=True, slots=True)
class Outcome:
    """What to append (none when `records` is empty) and what to answer once it is committed.

    `answer` holds response fields; for a registration `brokerEpoch` is -1 until the caller
    knows the record's offset (`epoch_is_offset`).
    """

    answer: dict[str, Any]
    records: list[MetadataRecord] = field(default_factory=list)
    epoch_is_offset: bool = False


def _reserved_dir(uuid: str) -> bool:
    """Kafka's `DirectoryId.reserved`: the first 100 UUIDs (high 64 bits 0, low < 100)."""
    try:
        raw = uuid_to_bytes(uuid)
    except ValueError:
        return True
    return int.from_bytes(raw[:8], "big") == 0 and int.from_bytes(raw[8:], "big") < 100


class BrokerRegistry:
    """The stand-in's registered brokers: decides registrations and heartbeats.

    Pure: no I/O. The stand-in appends `Outcome.records` and tells `replayed` what landed (its
    own records and the mirror's ZooKeeper-copied registrations alike, at their offsets).

    Args:
        cluster_id: the cluster id every broker must send.
        mv: the log's metadata.version (record versions, log-dir rules, the finalized level).
        kraft_version: the quorum's finalized kraft.version (0: static voters).
        session_timeout_ms: Kafka's `broker.session.timeout.ms` (a live session forbids another
            incarnation).
    """

    def __init__(self, cluster_id: str, mv: MetadataVersion, *, kraft_version: int = 0,
                 session_timeout_ms: float = 9000.0) -> None:
        self.cluster_id = cluster_id
        self.mv = mv
        self.finalized: dict[str, int] = {METADATA_VERSION: mv.feature_level,
                                          KRAFT_VERSION: kraft_version}
        self.session_timeout_ms = session_timeout_ms
        self.brokers: dict[int, _Broker] = {}
        self.activated_ms: float | None = None  # when sessions started (`activate`)

    def activate(self, now_ms: float) -> None:
        """Start serving: every registration the log holds gets a session from now (Kafka's
        controller touches each one when it activates), so an unfenced broker that never
        heartbeats to the stand-in is fenced one session timeout later."""
        self.activated_ms = now_ms

    # -- what the log holds ----------------------------------------------------------------

    def replayed(self, record: MetadataRecord, offset: int) -> None:
        """Follow a record appended at `offset` (Kafka's `ClusterControlManager.replay`)."""
        d = record.data
        if record.type == "REGISTER_BROKER_RECORD":
            bid = int(d["brokerId"])  # type: ignore[arg-type]
            prev = self.brokers.get(bid)
            same = prev is not None and prev.incarnation_id == d.get("incarnationId")
            self.brokers[bid] = _Broker(
                epoch=int(d["brokerEpoch"]),  # type: ignore[arg-type]
                incarnation_id=str(d.get("incarnationId")), record_offset=offset,
                fenced=bool(d.get("fenced", True)),
                in_controlled_shutdown=bool(d.get("inControlledShutdown", False)),
                log_dirs=tuple(d.get("logDirs") or ()),  # type: ignore[arg-type]
                last_contact_ms=prev.last_contact_ms if same and prev is not None else None)
        elif record.type == "UNREGISTER_BROKER_RECORD":
            self.brokers.pop(int(d["brokerId"]), None)  # type: ignore[arg-type]
        elif record.type in ("BROKER_REGISTRATION_CHANGE_RECORD", "FENCE_BROKER_RECORD",
                             "UNFENCE_BROKER_RECORD"):
            bid = int(d.get("brokerId", d.get("id", -1)))  # type: ignore[arg-type]
            b = self.brokers.get(bid)
            if b is None:
                return
            fenced = {"FENCE_BROKER_RECORD": FENCE, "UNFENCE_BROKER_RECORD": UNFENCE}.get(
                record.type, int(d.get("fenced", 0)))  # type: ignore[arg-type]
            if fenced:
                b.fenced = fenced == FENCE
            if int(d.get("inControlledShutdown", 0)) == 1:  # type: ignore[arg-type]
                b.in_controlled_shutdown = True
        elif record.type == "FEATURE_LEVEL_RECORD" and d.get("name") == METADATA_VERSION:
            self.finalized[METADATA_VERSION] = int(d["featureLevel"])  # type: ignore[arg-type]

    def live(self, broker_id: int, now_ms: float) -> bool:
        """The broker is registered, unfenced and heard from within the session timeout."""
        b = self.brokers.get(broker_id)
        return b is not None and self._live_session(b, now_ms)

    def fenced_in_session(self, broker_id: int, now_ms: float) -> bool:
        """Heard from within the session timeout, yet fenced: registered, not caught up."""
        b = self.brokers.get(broker_id)
        return (b is not None and b.fenced and b.last_contact_ms is not None
                and now_ms - b.last_contact_ms <= self.session_timeout_ms)

    def _live_session(self, b: _Broker, now_ms: float) -> bool:
        """Kafka's `hasValidSession`: unfenced and heard from within the session timeout."""
        return (not b.fenced and b.last_contact_ms is not None
                and now_ms - b.last_contact_ms <= self.session_timeout_ms)

    def _last_heard_ms(self, b: _Broker) -> float | None:
        return b.last_contact_ms if b.last_contact_ms is not None else self.activated_ms

    # -- session expiry ---------------------------------------------------------------------

    def fence_stale(self, now_ms: float) -> Outcome:
        """Fence the unfenced broker heard from longest ago if its session timed out (module
        docstring); no records when none did. One per call: the caller appends it and calls
        again, as Kafka reschedules at once while brokers are stale."""
        stale = [(heard, bid) for bid, b in self.brokers.items()
                 if not b.fenced and (heard := self._last_heard_ms(b)) is not None
                 and now_ms - heard > self.session_timeout_ms]
        if not stale:
            return Outcome({})
        _, bid = min(stale)
        b = self.brokers[bid]
        return Outcome({}, [MetadataRecord("BROKER_REGISTRATION_CHANGE_RECORD", 0, {
            "brokerId": bid, "brokerEpoch": b.epoch, "fenced": FENCE})])

    def next_expiry_ms(self) -> float | None:
        """When the next unfenced session times out as things stand (None: no session)."""
        heard = [h for b in self.brokers.values()
                 if not b.fenced and (h := self._last_heard_ms(b)) is not None]
        return min(heard) + self.session_timeout_ms if heard else None

    # -- BrokerRegistration -------------------------------------------------------------------

    def register(self, req: Mapping[str, Any], now_ms: float) -> Outcome:
        """Decide a BrokerRegistration request (module docstring)."""
        def refuse(code: int) -> Outcome:
            return Outcome({"throttleTimeMs": 0, "errorCode": code, "brokerEpoch": -1})

        if req["clusterId"] != self.cluster_id:
            return refuse(INCONSISTENT_CLUSTER_ID)
        bid = int(req["brokerId"])
        incarnation = str(req["incarnationId"])
        existing = self.brokers.get(bid)
        if (existing is not None and self._live_session(existing, now_ms)
                and existing.incarnation_id != incarnation):
            return refuse(DUPLICATE_BROKER_REGISTRATION)
        if not req.get("isMigratingZkBroker", False):
            return refuse(BROKER_ID_NOT_REGISTERED)  # pre-migration takes no KRaft broker
        log_dirs = [str(u) for u in req.get("logDirs") or ()]
        directories = self.mv.supports_directories
        if directories:
            if not log_dirs or any(_reserved_dir(u) for u in log_dirs) or len(
                    set(log_dirs)) != len(log_dirs):
                return refuse(INVALID_REGISTRATION)
            for other_id, other in self.brokers.items():
                if other_id != bid and set(other.log_dirs) & set(log_dirs):
                    return refuse(INVALID_REGISTRATION)
        features = [(str(f["name"]), int(f["minSupportedVersion"]),
                     int(f["maxSupportedVersion"])) for f in req.get("features") or ()]
        sent = {name for name, _, _ in features}
        checks = list(features)
        if METADATA_VERSION not in sent:  # assumed to support only the first KRaft level
            checks.append((METADATA_VERSION, 1, 1))
        checks += [(name, 0, 0) for name, level in self.finalized.items()
                   if level != 0 and name not in sent and name != METADATA_VERSION]
        for name, low, high in checks:
            level = self.finalized.get(name, 1 if name == METADATA_VERSION else 0)
            if not low <= level <= high:
                return refuse(UNSUPPORTED_VERSION)
        record_features = [{"name": n, "minSupportedVersion": lo, "maxSupportedVersion": hi}
                           for n, lo, hi in features]
        if METADATA_VERSION not in sent:
            record_features.append({"name": METADATA_VERSION, "minSupportedVersion": 1,
                                    "maxSupportedVersion": 1})
        version = record_version("REGISTER_BROKER_RECORD", self.mv)
        data: dict[str, Any] = {
            "brokerId": bid, "isMigratingZkBroker": True, "incarnationId": incarnation,
            "rack": req.get("rack"),
            "endPoints": [{"name": ep["name"], "host": ep["host"], "port": ep["port"],
                           "securityProtocol": ep["securityProtocol"]}
                          for ep in req.get("listeners") or ()],
            "features": record_features,
        }
        same = existing is not None and existing.incarnation_id == incarnation
        if same:
            assert existing is not None
            data.update(brokerEpoch=existing.epoch, fenced=existing.fenced,
                        inControlledShutdown=existing.in_controlled_shutdown)
        else:
            data.update(brokerEpoch=-1, fenced=True, inControlledShutdown=False)
        if version < 1:
            data.pop("inControlledShutdown")
        if version < 2:
            data.pop("isMigratingZkBroker")
        if version >= 3:
            data["logDirs"] = log_dirs if directories else []
        answer = {"throttleTimeMs": 0, "errorCode": NONE,
                  "brokerEpoch": existing.epoch if same and existing is not None else -1}
        return Outcome(answer, [MetadataRecord("REGISTER_BROKER_RECORD", version, data)],
                       epoch_is_offset=not same)

    # -- BrokerHeartbeat ----------------------------------------------------------------------

    def heartbeat(self, req: Mapping[str, Any], now_ms: float) -> Outcome:
        """Decide a BrokerHeartbeat request (module docstring)."""
        bid = int(req["brokerId"])
        b = self.brokers.get(bid)
        if b is None or b.epoch != int(req["brokerEpoch"]):
            return Outcome({"throttleTimeMs": 0, "errorCode": STALE_BROKER_EPOCH,
                            "isCaughtUp": False, "isFenced": True, "shouldShutDown": False})
        offset = int(req["currentMetadataOffset"])
        caught_up = offset >= b.record_offset
        fenced, shutdown, change = b.fenced, False, 0
        if req.get("wantShutDown"):
            shutdown, fenced, change = True, True, FENCE  # Kafka fences on SHUTDOWN_NOW
        elif b.fenced and not req.get("wantFence") and caught_up:
            fenced, change = False, UNFENCE
        elif not b.fenced and req.get("wantFence"):
            fenced, change = True, FENCE
        b.last_contact_ms = now_ms
        records = []
        if change:
            records.append(MetadataRecord("BROKER_REGISTRATION_CHANGE_RECORD", 0, {
                "brokerId": bid, "brokerEpoch": b.epoch, "fenced": change}))
        return Outcome({"throttleTimeMs": 0, "errorCode": NONE, "isCaughtUp": caught_up,
                        "isFenced": fenced, "shouldShutDown": shutdown}, records)
