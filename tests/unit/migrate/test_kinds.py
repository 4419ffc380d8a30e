"""Every entity kind is one complete registry entry (issue 29, "One entry per entity kind").

The registry (`migrate.translate.kinds.KINDS`) must name, for every kind, each role the migration
gives it: its ZooKeeper side (paths, key of a path, decoders with the JSON versions they take),
translation, delta, keys, record types, expected image, parity rows and snapshot lines. The
expected values here are written by hand from Kafka's record types, `verify`'s parity kinds and
the `snapshot` command's line kinds, so a kind added without its entry, or an entry that forgets
a role or claims another kind's record, fails here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import pytest

from migrate.cli.snapshot import snapshot_entities
from migrate.translate.entities import context_for, resync_keys
from migrate.translate.kind import EntityKind
from migrate.translate.kinds import BY_NAME, KINDS
from tests.support.snapshots import full_snapshot, mk_state, opts
from verify import KINDS as PARITY_KINDS
from verify import MetadataImage, apply_records, expected_image, image_rows
from writers import BROKER_RESOURCE, TOPIC_RESOURCE, MetadataRecord
from zkreader import ENTITY_KINDS, ZK_KINDS, ClusterSnapshot, EntityKey, entity_key_for_path

# Kafka's metadata record types (`metadata/src/main/resources/common/metadata/*.json`) that
# the entity mapping writes; a ConfigRecord is told apart by its resource type. The framing
# records (FeatureLevel, BeginTransaction, EndTransaction, ZkMigrationState) belong to no kind.
ENTITY_RECORD_TYPES = frozenset({
    "REGISTER_BROKER_RECORD",
    "UNREGISTER_BROKER_RECORD",
    "TOPIC_RECORD",
    "REMOVE_TOPIC_RECORD",
    "PARTITION_RECORD",
    "PARTITION_CHANGE_RECORD",
    "CONFIG_RECORD:TOPIC",
    "CONFIG_RECORD:BROKER",
    "CLIENT_QUOTA_RECORD",
    "USER_SCRAM_CREDENTIAL_RECORD",
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
    "PRODUCER_IDS_RECORD",
    "ACCESS_CONTROL_ENTRY_RECORD",
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
    "DELEGATION_TOKEN_RECORD",
    "REMOVE_DELEGATION_TOKEN_RECORD",
})
FRAMING_RECORD_TYPES = frozenset({
    "FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD",
    "ZK_MIGRATION_STATE_RECORD",
})

# The `snapshot` command's line kinds of znodes that are no entity (cluster-wide framing).
FRAMING_SNAPSHOT_LINES = frozenset({
    "cluster_id", "controller", "controller_epoch", "feature", "migration", "log_dir_event",
})

# One stored path per kind, written by hand: the key it maps to must be that kind's.
PATH_OF_KIND = {
    "broker": "/brokers/ids/3",
    "topic": "/brokers/topics/orders",
    "partition": "/brokers/topics/orders/partitions/2/state",
    "topic_config": "/config/topics/orders",
    "broker_config": "/config/brokers/<default>",
    "client_quota": "/config/users/alice/clients/app-1",
    "producer_ids": "/latest_producer_id_block",
    "acl": "/kafka-acl-extended/prefixed/Topic/ord",
    "delegation_token": "/delegation_token/tokens/tok1",
}


def _owner_key(record: MetadataRecord) -> str:
    if record.type != "CONFIG_RECORD":
        return record.type
    resource = {TOPIC_RESOURCE: "TOPIC", BROKER_RESOURCE: "BROKER"}[
        int(str(record.data["resourceType"]))]
    return f"CONFIG_RECORD:{resource}"


def _writable(kind: EntityKind) -> frozenset[str]:
    """What a key of `kind` may write: its own records and those of its parts."""
    parts = (k.records for k in KINDS if k.part_of == kind.name)
    return kind.records.union(*parts)


def test_the_registry_lists_every_kind_once_in_log_order() -> None:
    assert tuple(k.name for k in KINDS) == ENTITY_KINDS == (
        "broker", "topic", "partition", "topic_config", "broker_config", "client_quota",
        "producer_ids", "acl", "delegation_token")
    assert tuple(ZK_KINDS) == ENTITY_KINDS
    assert set(BY_NAME) == set(ENTITY_KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_every_role_of_an_entry_is_filled(kind: EntityKind) -> None:
    assert kind.zk is ZK_KINDS[kind.name]
    assert kind.zk.name == kind.name
    assert kind.zk.roots and kind.zk.decoders
    for decoder in kind.zk.decoders:
        # a format that differs by version is told apart in its decoder: it lists what it takes
        versions = decoder.VERSIONS  # type: ignore[attr-defined]
        assert versions and all(isinstance(v, int) and v >= 1 for v in versions), decoder
    for role in (kind.from_nothing, kind.diff, kind.snapshot_keys, kind.image_keys,
                 kind.zk.key, kind.zk.path, kind.zk.reads):
        assert callable(role)
    assert kind.records and kind.expected and kind.parity and kind.snapshot_lines
    if kind.part_of:
        whole = BY_NAME[kind.part_of]
        assert whole.part_of == "", "a part of a part"


def test_every_record_type_is_owned_by_exactly_one_kind() -> None:
    owned = [t for k in KINDS for t in k.records]
    assert sorted(owned) == sorted(ENTITY_RECORD_TYPES)  # no type twice, none missing


def test_every_parity_row_and_expected_image_part_is_owned() -> None:
    parity = [p for k in KINDS for p in k.parity]
    assert sorted(parity) == sorted(PARITY_KINDS)
    # each owned parity kind has rows: the full sample has entities of every one
    image = expected_image(full_snapshot())
    for name in parity:
        assert image_rows(image, name), name
    image_parts = {f.name for f in dataclasses.fields(MetadataImage)} - {
        "features", "zk_migration_state"}  # framing: the log's, no entity's
    assert {p for k in KINDS for p in k.expected} == image_parts == {
        "cluster", "topics", "configs", "client_quotas", "scram", "acls", "producer_ids",
        "delegation_tokens"}


def test_every_snapshot_line_is_owned_by_exactly_one_kind() -> None:
    declared = [line for k in KINDS for line in k.snapshot_lines]
    assert len(declared) == len(set(declared))
    seen = set()
    for line in snapshot_entities(full_snapshot()):
        kind = line["kind"]
        if kind == "config":
            kind = f"config:{line['data']['entity_type']}"
        seen.add(kind)
    assert seen - FRAMING_SNAPSHOT_LINES == set(declared)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_stored_path_maps_to_its_kind_and_back(kind: EntityKind) -> None:
    assert set(PATH_OF_KIND) == set(BY_NAME)
    key = entity_key_for_path(PATH_OF_KIND[kind.name])
    assert key is not None and key.kind == kind.name
    assert key.path == PATH_OF_KIND[kind.name]
    assert kind.zk.reads(key), "a key reads at least one znode"


# The list znodes whose children are each kind's entities (a child notification there means one
# was created or removed); a partition's states and the producer-id block are listed nowhere.
LISTS_OF_KIND = {
    "broker": ["/brokers/ids"],
    "topic": ["/brokers/topics", "/admin/delete_topics"],
    "partition": [],
    "topic_config": ["/config/topics"],
    "broker_config": ["/config/brokers"],
    "client_quota": ["/config/users", "/config/clients", "/config/ips",
                     "/config/users/alice/clients"],
    "producer_ids": [],
    "acl": ["/kafka-acl/Topic", "/kafka-acl-extended/prefixed/Group"],
    "delegation_token": ["/delegation_token/tokens"],
}


def test_each_list_znode_lists_one_kind() -> None:
    assert set(LISTS_OF_KIND) == set(BY_NAME)
    for name, lists in LISTS_OF_KIND.items():
        for path in lists:
            parts = path.split("/")[1:]
            claims = [zk.name for zk in ZK_KINDS.values() if zk.lists(parts)]
            assert claims == [name], path
    for parts in (["brokers"], ["config"], ["kafka-acl", "Topic", "orders"], ["controller"]):
        assert [zk.name for zk in ZK_KINDS.values() if zk.lists(parts)] == [], parts
    # the ACL roots list lists: their children (resource types, patterns) are read as lists
    assert ZK_KINDS["acl"].sublists("/kafka-acl", ["Topic", "junk"]) == ["/kafka-acl/Topic"]
    assert ZK_KINDS["acl"].sublists("/kafka-acl-extended", ["prefixed"]) == [
        "/kafka-acl-extended/prefixed"]
    assert ZK_KINDS["client_quota"].sublists("/config/users", ["bob"]) == [
        "/config/users/bob/clients"]


def _records_by_kind(image: MetadataImage, snap: ClusterSnapshot,
                     keys: Iterable[EntityKey]) -> dict[str, list[MetadataRecord]]:
    ctx = context_for(snap, opts())
    out: dict[str, list[MetadataRecord]] = {}
    for key in keys:
        kind = BY_NAME[key.kind]
        out.setdefault(key.kind, []).extend(kind.diff(key, image, snap, ctx).records)
    return out


def test_each_kind_writes_only_its_own_records_adding_changing_and_removing() -> None:
    snap = full_snapshot()
    ctx = context_for(snap, opts())
    added: list[MetadataRecord] = []
    for kind in KINDS:
        for key in kind.snapshot_keys(snap):
            assert key.kind == kind.name
            records = kind.from_nothing(key, snap, ctx).records
            assert records, key  # a key of the snapshot has records
            assert {_owner_key(r) for r in records} <= _writable(kind), key
            added += records
    image = apply_records(MetadataImage.EMPTY, added)
    # orders-0 (leader 1, ISR [1, 2], leader epoch 7, version 11) shrinks its ISR
    states = dict(snap.partition_states)
    states[("orders", 0)] = mk_state("orders", 0, leader=1, isr=(1,), leader_epoch=7, version=12)
    shrunk = dataclasses.replace(snap, partition_states=states)
    changed = _records_by_kind(image, shrunk, [EntityKey.partition_of("orders", 0)])
    assert {_owner_key(r) for r in changed["partition"]} == {"PARTITION_CHANGE_RECORD"}
    empty = ClusterSnapshot(cluster_id=snap.cluster_id)
    removed = _records_by_kind(image, empty, resync_keys(image, empty))
    for name, records in removed.items():
        assert {_owner_key(r) for r in records} <= _writable(BY_NAME[name]), name
    assert {_owner_key(r) for r in added} == {
        "REGISTER_BROKER_RECORD", "TOPIC_RECORD", "PARTITION_RECORD", "CONFIG_RECORD:TOPIC",
        "CONFIG_RECORD:BROKER", "CLIENT_QUOTA_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
        "PRODUCER_IDS_RECORD", "ACCESS_CONTROL_ENTRY_RECORD", "DELEGATION_TOKEN_RECORD"}
    # a topic's removal takes its configs; Kafka never removes the producer-id block
    assert {_owner_key(r) for rs in removed.values() for r in rs} == {
        "UNREGISTER_BROKER_RECORD", "REMOVE_TOPIC_RECORD", "CONFIG_RECORD:BROKER",
        "CLIENT_QUOTA_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"}
