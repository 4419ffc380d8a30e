"""Per-entity mapping and diff (issue 8, "one mapping, per entity").

Every expected record below is written out by hand from Kafka's record schemas and replay rules
(a PartitionChangeRecord raises partitionEpoch by one and, when it carries `leader`, the leader
epoch by one; a null ConfigRecord value deletes the key; ...), never computed by the code under
test. Each diff is also replayed onto the old image and judged by verify's parity against the
image verify expects from the new ZooKeeper state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from migrate import EntityKey, bulk_entity_keys, delta_records, entity_key_for_path, translate
from migrate.errors import BlockersFoundError
from tests.support.snapshots import (
    SCRAM_256,
    SCRAM_512,
    cfg,
    full_snapshot,
    mk_broker,
    mk_state,
    mk_topic,
    opts,
    st,
)
from verify import MetadataImage, apply_records, compare, expected_image
from writers import MetadataRecord, sanitize
from zkreader import (
    AclEntry,
    AclResource,
    ClusterSnapshot,
    DelegationToken,
    ProducerIdBlock,
)

ORDERS = "b6XP0CJvTPmZ9aaiSNa5NA"


def R(type_: str, **data: Any) -> MetadataRecord:  # noqa: N802 - reads like a record literal
    return MetadataRecord(type_, 0, data)


def image_of(snapshot: ClusterSnapshot) -> MetadataImage:
    """The image the bulk copy of `snapshot` replays to (what the log holds after pre-copy)."""
    records = [r for r in translate(snapshot, opts()).records if "TRANSACTION" not in r.type]
    return apply_records(MetadataImage.EMPTY, records)


def diff(old: ClusterSnapshot, new: ClusterSnapshot, *keys: EntityKey) -> list[MetadataRecord]:
    got = delta_records(image_of(old), new, keys, opts())
    assert got.blockers == []
    # parity: the old image plus the delta is what verify expects from the new tree
    after = apply_records(image_of(old), got.records)
    assert [d for d in compare(expected_image(new), after)] == []
    return got.records


def changed(snapshot: ClusterSnapshot, **fields: Any) -> ClusterSnapshot:
    return dataclasses.replace(snapshot, **fields)


def with_state(snapshot: ClusterSnapshot, key: tuple[str, int], **kw: Any) -> ClusterSnapshot:
    states = dict(snapshot.partition_states)
    states[key] = mk_state(key[0], key[1], **kw)
    return changed(snapshot, partition_states=states)


# --------------------------------------------------------------------------- bulk == diff(∅)


def test_the_bulk_copy_is_the_diff_of_nothing_against_everything() -> None:
    snap = full_snapshot()
    body = translate(snap, opts()).records[2:-2]  # minus FeatureLevel+Begin, MIGRATION+End
    assert delta_records(MetadataImage.EMPTY, snap, bulk_entity_keys(snap), opts()).records == body


def test_an_unchanged_tree_diffs_to_nothing() -> None:
    snap = full_snapshot()
    assert delta_records(image_of(snap), snap, bulk_entity_keys(snap), opts()).records == []


def test_framing_is_the_callers() -> None:
    snap = full_snapshot()
    closed = translate(snap, opts()).records
    open_ = translate(snap, dataclasses.replace(opts(), close_migration=False)).records
    assert [r.type for r in closed[-2:]] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
    assert open_ == closed[:-2]
    assert [r.type for r in open_[:2]] == ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD"]


# ------------------------------------------------------------------------------- partitions


def test_an_isr_shrink_is_one_partition_change_record() -> None:
    old = full_snapshot()  # orders-0: leader 1, isr [1, 2], leader epoch 7, version 11
    new = with_state(old, ("orders", 0), leader=1, isr=(1,), leader_epoch=7, version=12)
    assert diff(old, new, EntityKey.partition_of("orders", 0)) == [
        R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=ORDERS, isr=[1])
    ]


def test_a_leader_change_sets_leader_and_lets_replay_bump_the_leader_epoch() -> None:
    old = full_snapshot()
    new = with_state(old, ("orders", 0), leader=2, isr=(2,), leader_epoch=8, version=12)
    assert diff(old, new, EntityKey.partition_of("orders", 0)) == [
        R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=ORDERS, isr=[2], leader=2)
    ]


def test_a_leader_epoch_bump_with_the_same_leader_repeats_the_leader() -> None:
    old = full_snapshot()
    new = with_state(old, ("orders", 0), leader=1, isr=(1, 2), leader_epoch=8, version=12)
    assert diff(old, new, EntityKey.partition_of("orders", 0)) == [
        R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=ORDERS, leader=1)
    ]


def test_two_updates_folded_into_one_reread_write_the_whole_partition() -> None:
    # version 11 -> 13: a change record would replay to partitionEpoch 12, parity wants 13
    old = full_snapshot()
    new = with_state(old, ("orders", 0), leader=1, isr=(1,), leader_epoch=7, version=13)
    assert diff(old, new, EntityKey.partition_of("orders", 0)) == [
        R("PARTITION_RECORD", partitionId=0, topicId=ORDERS, replicas=[1, 2], isr=[1],
          removingReplicas=[], addingReplicas=[], leader=1, leaderEpoch=7, partitionEpoch=13,
          leaderRecoveryState=0)
    ]


def test_a_leader_epoch_jump_writes_the_whole_partition() -> None:
    old = full_snapshot()
    new = with_state(old, ("orders", 0), leader=2, isr=(2, 1), leader_epoch=10, version=12)
    assert diff(old, new, EntityKey.partition_of("orders", 0)) == [
        R("PARTITION_RECORD", partitionId=0, topicId=ORDERS, replicas=[1, 2], isr=[2, 1],
          removingReplicas=[], addingReplicas=[], leader=2, leaderEpoch=10, partitionEpoch=12,
          leaderRecoveryState=0)
    ]


def test_a_reassignment_start_changes_replicas_and_adding() -> None:
    old = full_snapshot()
    topics = dict(old.topics)
    topics["orders"] = mk_topic("orders", {0: (1, 2, 10), 1: (2, 10), 2: (10, 1)},
                                topic_id=ORDERS, adding={0: (10,)})
    new = with_state(changed(old, topics=topics), ("orders", 0), leader=1, isr=(1, 2),
                     leader_epoch=7, version=12)
    assert diff(old, new, EntityKey.topic("orders")) == [
        R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=ORDERS, replicas=[1, 2, 10],
          addingReplicas=[10])
    ]


# ----------------------------------------------------------------------------------- topics


def test_a_new_partition_is_a_partition_record() -> None:
    old = full_snapshot()
    topics = dict(old.topics)
    topics["orders"] = mk_topic("orders", {0: (1, 2), 1: (2, 10), 2: (10, 1), 3: (1, 10)},
                                topic_id=ORDERS)
    new = with_state(changed(old, topics=topics), ("orders", 3), leader=1, isr=(1, 10),
                     leader_epoch=0, version=0)
    assert diff(old, new, EntityKey.topic("orders")) == [
        R("PARTITION_RECORD", partitionId=3, topicId=ORDERS, replicas=[1, 10], isr=[1, 10],
          removingReplicas=[], addingReplicas=[], leader=1, leaderEpoch=0, partitionEpoch=0,
          leaderRecoveryState=0)
    ]


def test_a_created_topic_is_its_topic_config_and_partition_records() -> None:
    old = full_snapshot()
    topics = dict(old.topics)
    topics["fresh"] = mk_topic("fresh", {0: (2,)}, topic_id="AAAAAAAAAAAAAAAAAAAABQ")
    new = with_state(changed(old, topics=topics, topic_configs={
        **old.topic_configs, "fresh": cfg("topics/fresh", {"segment.ms": "60"})}),
        ("fresh", 0), leader=2, isr=(2,), leader_epoch=0, version=0)
    assert diff(old, new, EntityKey.topic("fresh")) == [
        R("TOPIC_RECORD", name="fresh", topicId="AAAAAAAAAAAAAAAAAAAABQ"),
        R("CONFIG_RECORD", resourceType=2, resourceName="fresh", name="segment.ms", value="60"),
        R("PARTITION_RECORD", partitionId=0, topicId="AAAAAAAAAAAAAAAAAAAABQ", replicas=[2],
          isr=[2], removingReplicas=[], addingReplicas=[], leader=2, leaderEpoch=0,
          partitionEpoch=0, leaderRecoveryState=0),
    ]


def test_a_topic_queued_for_deletion_or_gone_is_removed() -> None:
    old = full_snapshot()
    queued = changed(old, pending_deletions=frozenset({"doomed", "orders"}))
    assert diff(old, queued, EntityKey.topic("orders")) == [
        R("REMOVE_TOPIC_RECORD", topicId=ORDERS)
    ]
    topics = {n: t for n, t in old.topics.items() if n != "orders"}
    gone = changed(old, topics=topics, partition_states={
        k: v for k, v in old.partition_states.items() if k[0] != "orders"})
    assert diff(old, gone, EntityKey.topic("orders")) == [R("REMOVE_TOPIC_RECORD", topicId=ORDERS)]


def test_a_topic_recreated_under_its_name_is_removed_then_written_anew() -> None:
    old = full_snapshot()
    topics = dict(old.topics)
    topics["alpha"] = mk_topic("alpha", {0: (1,)}, topic_id="AAAAAAAAAAAAAAAAAAAABg")
    new = with_state(changed(old, topics=topics), ("alpha", 0), leader=1, isr=(1,),
                     leader_epoch=0, version=0)
    assert diff(old, new, EntityKey.topic("alpha")) == [
        R("REMOVE_TOPIC_RECORD", topicId="QmE-4ooBSEWo02xn3zYtYA"),
        R("TOPIC_RECORD", name="alpha", topicId="AAAAAAAAAAAAAAAAAAAABg"),
        R("PARTITION_RECORD", partitionId=0, topicId="AAAAAAAAAAAAAAAAAAAABg", replicas=[1],
          isr=[1], removingReplicas=[], addingReplicas=[], leader=1, leaderEpoch=0,
          partitionEpoch=0, leaderRecoveryState=0),
    ]


def test_a_created_topic_reusing_an_existing_topics_id_is_refused_naming_both() -> None:
    old = full_snapshot()
    topics = dict(old.topics)
    topics["orders.copy"] = mk_topic("orders.copy", {0: (1,)}, topic_id=ORDERS)
    new = with_state(changed(old, topics=topics), ("orders.copy", 0), leader=1, isr=(1,),
                     leader_epoch=0, version=0)
    with pytest.raises(BlockersFoundError) as refused:
        delta_records(image_of(old), new, [EntityKey.topic("orders.copy")], opts())
    message = str(refused.value)
    assert "/brokers/topics/orders.copy" in message and "/brokers/topics/orders:" in message
    assert ORDERS in message


def test_an_id_freed_earlier_in_the_same_delta_may_be_taken() -> None:
    old = full_snapshot()
    topics = {n: t for n, t in old.topics.items() if n != "orders"}
    topics["orders.renamed"] = mk_topic("orders.renamed", {0: (1,)}, topic_id=ORDERS)
    new = with_state(changed(old, topics=topics, partition_states={
        k: v for k, v in old.partition_states.items() if k[0] != "orders"}),
        ("orders.renamed", 0), leader=1, isr=(1,), leader_epoch=0, version=0)
    got = delta_records(image_of(old), new,
                        [EntityKey.topic("orders"), EntityKey.topic("orders.renamed")], opts())
    assert [r.type for r in got.records][:2] == ["REMOVE_TOPIC_RECORD", "TOPIC_RECORD"]
    # the other order would replay as: orders.renamed replaces orders, then is removed
    with pytest.raises(BlockersFoundError):
        delta_records(image_of(old), new,
                      [EntityKey.topic("orders.renamed"), EntityKey.topic("orders")], opts())


# ---------------------------------------------------------------------------------- configs


def test_topic_config_set_and_delete() -> None:
    old = full_snapshot()  # orders: retention.ms 1000, cleanup.policy compact
    new = changed(old, topic_configs={**old.topic_configs, "orders": cfg(
        "topics/orders", {"retention.ms": "2000", "max.message.bytes": "10"})})
    assert diff(old, new, EntityKey("topic_config", "orders")) == [
        R("CONFIG_RECORD", resourceType=2, resourceName="orders", name="cleanup.policy",
          value=None),
        R("CONFIG_RECORD", resourceType=2, resourceName="orders", name="max.message.bytes",
          value="10"),
        R("CONFIG_RECORD", resourceType=2, resourceName="orders", name="retention.ms",
          value="2000"),
    ]


def test_broker_config_znode_deleted_deletes_every_key() -> None:
    old = full_snapshot()
    new = changed(old, broker_configs={"1": old.broker_configs["1"]})
    assert diff(old, new, EntityKey("broker_config", "<default>")) == [
        R("CONFIG_RECORD", resourceType=4, resourceName="", name="num.io.threads", value=None)
    ]


# ------------------------------------------------------------------------ quotas and SCRAM


def test_quota_change_and_removal() -> None:
    old = full_snapshot()
    before: Mapping[str, str] = old.client_configs["app-1"].config
    assert before == {"request_percentage": "50.5"}
    new = changed(old, client_configs={"app-1": cfg("clients/app-1",
                                                    {"consumer_byte_rate": "2048"})})
    entity = [{"entityType": "client-id", "entityName": "app-1"}]
    assert diff(old, new, EntityKey("client_quota", "clients/app-1")) == [
        R("CLIENT_QUOTA_RECORD", entity=entity, key="consumer_byte_rate", value=2048.0,
          remove=False),
        R("CLIENT_QUOTA_RECORD", entity=entity, key="request_percentage", value=0.0,
          remove=True),
    ]


def test_scram_credential_removed_and_added() -> None:
    user = sanitize("carol@example.com")
    old = changed(full_snapshot(), user_configs={user: cfg(f"users/{user}",
                                                           {"SCRAM-SHA-256": SCRAM_256})})
    new = changed(old, user_configs={user: cfg(f"users/{user}", {"SCRAM-SHA-512": SCRAM_512})})
    got = diff(old, new, EntityKey("client_quota", f"users/{user}"))
    assert [(r.type, r.data["name"], r.data["mechanism"]) for r in got] == [
        ("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", "carol@example.com", 1),
        ("USER_SCRAM_CREDENTIAL_RECORD", "carol@example.com", 2),
    ]
    assert got[1].data["iterations"] == 8192


# ---------------------------------------------------------- brokers, ACLs, tokens, producer ids


def test_a_broker_leaving_is_unregistered_and_rejoining_registered_anew() -> None:
    old = full_snapshot()  # broker 2 registered with czxid 4200
    gone = changed(old, brokers={b: v for b, v in old.brokers.items() if b != 2})
    assert diff(old, gone, EntityKey.broker(2)) == [
        R("UNREGISTER_BROKER_RECORD", brokerId=2, brokerEpoch=4200)
    ]
    back = changed(old, brokers={**old.brokers, 2: mk_broker(2, czxid=9000)})
    got = diff(old, back, EntityKey.broker(2))
    assert [(r.type, r.data["brokerId"], r.data["brokerEpoch"]) for r in got] == [
        ("REGISTER_BROKER_RECORD", 2, 9000)
    ]


def _registered_by_the_broker(image: MetadataImage, broker_id: int, offset: int,
                              **over: Any) -> MetadataImage:
    """The image after broker `broker_id` registered itself with the stand-in: its own
    incarnation, epoch = the offset of its record (Kafka's rule), then unfenced."""
    held = image.cluster.brokers[broker_id]
    data = {**held.record(2).data, "incarnationId": "7C9rNwqDS8-Oo6l1Y0w8Nw",
            "brokerEpoch": offset, "fenced": True, **over}
    return apply_records(image, [
        MetadataRecord("REGISTER_BROKER_RECORD", 2, data),
        MetadataRecord("BROKER_REGISTRATION_CHANGE_RECORD", 0,
                       {"brokerId": broker_id, "brokerEpoch": offset, "fenced": -1})])


def test_a_brokers_own_registration_is_kept_while_zookeeper_agrees() -> None:
    """The broker re-registered in ZooKeeper (new czxid) and with the stand-in: the mirror
    writes nothing over its own registration (its heartbeats would turn stale)."""
    old = full_snapshot()
    image = _registered_by_the_broker(image_of(old), 2, offset=77)
    back = changed(old, brokers={**old.brokers, 2: mk_broker(2, czxid=9000)})
    assert delta_records(image, back, [EntityKey.broker(2)], opts()).records == []
    assert delta_records(image, old, [EntityKey.broker(2)], opts()).records == []


def test_zookeeper_listeners_that_differ_from_the_brokers_registration_are_written() -> None:
    old = full_snapshot()
    image = _registered_by_the_broker(image_of(old), 2, offset=77, endPoints=[
        {"name": "PLAINTEXT", "host": "elsewhere", "port": 9092, "securityProtocol": 0}])
    got = delta_records(image, old, [EntityKey.broker(2)], opts()).records
    assert [(r.type, r.data["brokerEpoch"]) for r in got] == [("REGISTER_BROKER_RECORD", 4200)]


def test_a_brokers_own_registration_is_unregistered_when_its_znode_goes() -> None:
    old = full_snapshot()
    image = _registered_by_the_broker(image_of(old), 2, offset=77)
    gone = changed(old, brokers={b: v for b, v in old.brokers.items() if b != 2})
    assert delta_records(image, gone, [EntityKey.broker(2)], opts()).records == [
        R("UNREGISTER_BROKER_RECORD", brokerId=2, brokerEpoch=77)]


def test_acl_binding_removed_and_added() -> None:
    old = full_snapshot()
    resource = next(r for r in old.acls if r.pattern_type == "LITERAL" and r.name == "orders")
    new_resource = AclResource("LITERAL", "Topic", "orders",
                               (AclEntry("User:zed", "Deny", "Write", "*"),), st())
    new = changed(old, acls=tuple(new_resource if r is resource else r for r in old.acls))
    got = diff(old, new, EntityKey.acl("LITERAL", "Topic", "orders"))
    removed = [r for r in got if r.type == "REMOVE_ACCESS_CONTROL_ENTRY_RECORD"]
    added = [dict(r.data) for r in got if r.type == "ACCESS_CONTROL_ENTRY_RECORD"]
    assert len(removed) == len(resource.acls)
    assert [{k: v for k, v in a.items() if k != "id"} for a in added] == [
        {"resourceType": 2, "resourceName": "orders", "patternType": 3, "principal": "User:zed",
         "host": "*", "operation": 4, "permissionType": 2}
    ]


def test_token_removed_and_producer_block_moved() -> None:
    old = full_snapshot()
    new = changed(old, delegation_tokens={}, producer_id_block=ProducerIdBlock(
        1, 3, 6000, 6999, st()))  # was broker 2's 5000-5999
    assert diff(old, new, EntityKey("delegation_token", "tok1"),
                EntityKey("producer_ids", "")) == [
        R("PRODUCER_IDS_RECORD", brokerId=3, brokerEpoch=-1, nextProducerId=7000),
        R("REMOVE_DELEGATION_TOKEN_RECORD", tokenId="tok1"),
    ]
    renewed = changed(old, delegation_tokens={"tok1": dataclasses.replace(
        old.delegation_tokens["tok1"], expiry_timestamp_ms=99)})
    got = diff(old, renewed, EntityKey("delegation_token", "tok1"))
    assert [(r.type, r.data["expirationTimestamp"]) for r in got] == [
        ("DELEGATION_TOKEN_RECORD", 99)
    ]
    assert isinstance(old.delegation_tokens["tok1"], DelegationToken)


# ----------------------------------------------------------------------------- keys of paths


@pytest.mark.parametrize(("path", "key"), [
    ("/brokers/ids/3", EntityKey("broker", "3")),
    ("/brokers/topics/t", EntityKey("topic", "t")),
    ("/brokers/topics/t/partitions/4/state", EntityKey("partition", "t", 4)),
    ("/admin/delete_topics/t", EntityKey("topic", "t")),
    ("/config/topics/t", EntityKey("topic_config", "t")),
    ("/config/brokers/<default>", EntityKey("broker_config", "<default>")),
    ("/config/users/a%40b", EntityKey("client_quota", "users/a%40b")),
    ("/config/users/a/clients/c", EntityKey("client_quota", "users/a/clients/c")),
    ("/config/ips/10.0.0.1", EntityKey("client_quota", "ips/10.0.0.1")),
    ("/kafka-acl/Topic/x", EntityKey("acl", "LITERAL/Topic/x")),
    ("/kafka-acl-extended/prefixed/Group/g-", EntityKey("acl", "PREFIXED/Group/g-")),
    ("/delegation_token/tokens/tk", EntityKey("delegation_token", "tk")),
    ("/latest_producer_id_block", EntityKey("producer_ids", "")),
    ("/brokers/topics", None),
    ("/config/users", None),
    ("/controller", None),
    ("/brokers/topics/t/partitions/4", None),
    ("/log_dir_event_notification/log_dir_event_0000000001", None),
])
def test_entity_key_for_path(path: str, key: EntityKey | None) -> None:
    assert entity_key_for_path(path) == key
    if key is not None:
        assert key.path == (path if not path.startswith("/admin") else "/brokers/topics/t")


def test_a_full_resync_removes_what_only_the_log_still_holds() -> None:
    # after a session expiry the mirror re-reads everything: entities gone from ZooKeeper are
    # known only to the log's image, and resync_keys names them as ZooKeeper would store them
    from migrate import resync_keys

    old = full_snapshot()
    new = changed(
        old, brokers={1: old.brokers[1]}, delegation_tokens={}, acls=old.acls[:1],
        user_configs={}, client_configs={}, broker_configs={"1": old.broker_configs["1"]},
        topics={"orders": old.topics["orders"], "doomed": old.topics["doomed"]},
    )
    image = image_of(old)
    keys = resync_keys(image, new)
    assert EntityKey("client_quota", "users/alice%40example.com") in keys  # sanitized again
    assert EntityKey("client_quota", "users/<default>") in keys
    assert EntityKey("broker_config", "<default>") in keys  # KRaft's "" is ZooKeeper's default
    assert EntityKey.acl("LITERAL", "Cluster", "kafka-cluster") in keys  # PascalCase, as stored
    got = delta_records(image, new, keys, opts())
    assert compare(expected_image(new), apply_records(image, got.records)) == []
    assert {r.type for r in got.records} >= {
        "UNREGISTER_BROKER_RECORD", "REMOVE_TOPIC_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD",
        "REMOVE_ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
        "CLIENT_QUOTA_RECORD", "CONFIG_RECORD"}
    assert delta_records(image, old, resync_keys(image, old), opts()).records == []


def test_a_badly_sanitized_user_is_an_error_naming_the_znode_even_when_deleted() -> None:
    from migrate import TranslationError

    old = full_snapshot()
    with pytest.raises(TranslationError, match="/config/users/bad%zz"):
        delta_records(image_of(old), old, [EntityKey("client_quota", "users/bad%zz")], opts())
