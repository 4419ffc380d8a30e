"""What the log holds, and the delta records that bring it to what ZooKeeper holds now.

The online run's whole-tree comparison, for where nobody knows what changed (a session
expiry, the drain of a resumed run; a notification's delta is per entity, `migrate.entities`):
it works on whole translations, so it costs O(cluster), but it never holds a second copy of the
ZooKeeper->KRaft mapping. The mapping stays `translate()`'s; this only compares
records by their identity and emits the removal record Kafka defines for what disappeared.

Identity of a record (what a later record of the same identity replaces):
topic by id, partition by (topic id, partition), config by (resource, key), quota by
(entity, key), SCRAM by (user, mechanism), ACL by id, token by id, broker by id, the producer-id
block and each feature level by name. A changed partition is written as a full
`PartitionRecord`, which also keeps `partitionEpoch` equal to the state znode's version however
many updates one notification folded together.

Order of a delta (I2): topic removals first, then upserts in `translate`'s order (brokers before
the partitions that name them, a topic before its configs and partitions), then removals of
configs, quotas, SCRAM, ACLs and tokens, broker unregistrations last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from writers import ControlRecord, MetadataRecord, encode_record

__all__ = ["FRAMING_TYPES", "LogState"]

FRAMING_TYPES = frozenset({"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
                           "ABORT_TRANSACTION_RECORD", "ZK_MIGRATION_STATE_RECORD",
                           "NO_OP_RECORD"})
_TOPIC_RESOURCE = 2
_NO_LEADER_CHANGE = -2

Key = tuple[Any, ...]


def _quota_entity(data: dict[str, Any]) -> tuple[tuple[str, str | None], ...]:
    return tuple(sorted((e["entityType"], e.get("entityName")) for e in data["entity"]))


def record_key(record: MetadataRecord) -> Key | None:
    """The identity of a metadata record (module docstring); None for framing records.

    Raises:
        ValueError: a record type the migration never writes.
    """
    d = record.data
    t = record.type
    if t in FRAMING_TYPES:
        return None
    if t == "FEATURE_LEVEL_RECORD":
        return ("feature", d["name"])
    if t in ("REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD"):
        return ("broker", int(d["brokerId"]))
    if t in ("TOPIC_RECORD", "REMOVE_TOPIC_RECORD"):
        return ("topic", d["topicId"])
    if t in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD"):
        return ("partition", d["topicId"], int(d["partitionId"]))
    if t == "CONFIG_RECORD":
        return ("config", int(d["resourceType"]), d["resourceName"], d["name"])
    if t == "CLIENT_QUOTA_RECORD":
        return ("quota", _quota_entity(d), d["key"])
    if t in ("USER_SCRAM_CREDENTIAL_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"):
        return ("scram", d["name"], int(d["mechanism"]))
    if t == "PRODUCER_IDS_RECORD":
        return ("producer_ids",)
    if t in ("ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"):
        return ("acl", d["id"])
    if t in ("DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"):
        return ("token", d["tokenId"])
    raise ValueError(f"record type {t} is not one the migration writes")


def _removal(key: Key, held: MetadataRecord) -> MetadataRecord | None:
    kind = key[0]
    d = held.data
    if kind == "config":
        return MetadataRecord("CONFIG_RECORD", 0, {
            "resourceType": d["resourceType"], "resourceName": d["resourceName"],
            "name": d["name"], "value": None})
    if kind == "quota":
        return MetadataRecord("CLIENT_QUOTA_RECORD", 0, {
            "entity": d["entity"], "key": d["key"], "value": 0.0, "remove": True})
    if kind == "scram":
        return MetadataRecord("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0,
                              {"name": d["name"], "mechanism": d["mechanism"]})
    if kind == "acl":
        return MetadataRecord("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", 0, {"id": d["id"]})
    if kind == "token":
        return MetadataRecord("REMOVE_DELEGATION_TOKEN_RECORD", 0, {"tokenId": d["tokenId"]})
    if kind == "broker":
        return MetadataRecord("UNREGISTER_BROKER_RECORD", 0, {
            "brokerId": d["brokerId"], "brokerEpoch": d["brokerEpoch"]})
    return None  # partitions go with their topic; features and the pid block never go


class LogState:
    """The metadata records the log holds, by identity, as a replay of the log leaves them.

    Only records (never offsets) are kept; the quorum writer owns offsets.
    """

    def __init__(self) -> None:
        self._held: dict[Key, tuple[MetadataRecord, bytes]] = {}
        self.transaction_open = False
        self.migration_state: int | None = None

    def __len__(self) -> int:
        return len(self._held)

    def apply(self, records: Iterable[MetadataRecord | ControlRecord]) -> None:
        """Replay records (as written to the log) into the state."""
        for r in records:
            if isinstance(r, ControlRecord):
                continue
            t = r.type
            if t == "BEGIN_TRANSACTION_RECORD":
                self.transaction_open = True
                continue
            if t in ("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"):
                self.transaction_open = False
                continue
            if t == "ZK_MIGRATION_STATE_RECORD":
                self.migration_state = int(r.data["zkMigrationState"])
                continue
            key = record_key(r)
            if key is None:
                continue
            if t == "REMOVE_TOPIC_RECORD":
                self._remove_topic(r.data["topicId"])
            elif t == "PARTITION_CHANGE_RECORD":
                self._change_partition(key, r)
            elif t.startswith("REMOVE_") or t == "UNREGISTER_BROKER_RECORD" or (
                    t == "CONFIG_RECORD" and r.data.get("value") is None) or (
                    t == "CLIENT_QUOTA_RECORD" and r.data.get("remove")):
                self._held.pop(key, None)
            else:
                self._held[key] = (r, encode_record(r))

    def _change_partition(self, key: Key, change: MetadataRecord) -> None:
        """Merge a `PartitionChangeRecord` into the held `PartitionRecord`, as Kafka's
        `PartitionRegistration.merge` does: named fields replace, a leader change bumps the
        leader epoch, every change bumps the partition epoch."""
        held = self._held.get(key)
        if held is None:
            return
        data = dict(held[0].data)
        c = change.data
        for field in ("replicas", "isr", "removingReplicas", "addingReplicas"):
            if c.get(field) is not None:
                data[field] = list(c[field])  # type: ignore[arg-type]
        leader = int(c.get("leader", _NO_LEADER_CHANGE))  # type: ignore[arg-type]
        if leader != _NO_LEADER_CHANGE:
            data["leader"] = leader
            data["leaderEpoch"] = int(data["leaderEpoch"]) + 1  # type: ignore[arg-type]
        lrs = int(c.get("leaderRecoveryState", -1))  # type: ignore[arg-type]
        if lrs != -1:
            data["leaderRecoveryState"] = lrs
        data["partitionEpoch"] = int(data["partitionEpoch"]) + 1  # type: ignore[arg-type]
        merged = MetadataRecord(held[0].type, held[0].version, data)
        self._held[key] = (merged, encode_record(merged))

    def _remove_topic(self, topic_id: str) -> None:
        held = self._held.pop(("topic", topic_id), None)
        name = held[0].data["name"] if held is not None else None
        for key in [k for k in self._held
                    if (k[0] == "partition" and k[1] == topic_id)
                    or (k[0] == "config" and k[1] == _TOPIC_RESOURCE and k[2] == name)]:
            del self._held[key]

    def delta_to(self, target: Sequence[MetadataRecord]) -> list[MetadataRecord]:
        """The records that make the log hold exactly `target`'s metadata (framing ignored).

        `target` is a complete translation in `translate`'s order. The state is updated as if
        the returned records were written.
        """
        wanted: dict[Key, tuple[MetadataRecord, bytes]] = {}
        order: list[Key] = []
        for r in target:
            key = record_key(r)
            if key is None:
                continue
            if key not in wanted:
                order.append(key)
            wanted[key] = (r, encode_record(r))
        out: list[MetadataRecord] = []
        removed_topics = sorted(
            (held[0].data["name"], k[1]) for k, held in self._held.items()
            if k[0] == "topic" and k not in wanted)
        removed_names = {name for name, _ in removed_topics}
        for _, topic_id in removed_topics:
            out.append(MetadataRecord("REMOVE_TOPIC_RECORD", 0, {"topicId": topic_id}))
        for key in order:
            rec, data = wanted[key]
            held = self._held.get(key)
            fresh_resource = key[0] == "config" and key[1] == _TOPIC_RESOURCE and \
                key[2] in removed_names
            if held is None or held[1] != data or fresh_resource:
                out.append(rec)
        unregister: list[MetadataRecord] = []
        for key, (rec, _) in sorted(self._held.items(), key=lambda kv: repr(kv[0])):
            if key in wanted or key[0] in ("topic", "partition"):
                continue
            if key[0] == "config" and key[1] == _TOPIC_RESOURCE and key[2] in removed_names:
                continue
            removal = _removal(key, rec)
            if removal is None:
                continue
            (unregister if key[0] == "broker" else out).append(removal)
        out += unregister
        self.apply(out)
        return out
