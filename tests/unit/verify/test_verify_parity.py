"""Parity on constructed snapshots: translator output replays to the expected image, and every
kind of drift is reported with the right kind, key and field (and no secret)."""

from __future__ import annotations

import base64
import dataclasses
import json

import pytest

from migrate.translate.framing import TranslationOptions, parse_target_version
from migrate.translate.translation import translate
from verify import (
    MetadataImage,
    compare,
    diff_rows,
    expected_image,
    image_rows,
    load_records,
    natural_key,
    parity_report,
)
from verify.image import FrozenMap
from zkreader import (
    AclEntry,
    AclResource,
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ConfigZnode,
    DelegationToken,
    PartitionState,
    ProducerIdBlock,
    Topic,
    ZnodeStat,
)

SALT = b"pepper-salt-0123"
STORED = b"S" * 32
SERVER = b"V" * 32


def stat(version: int = 0, czxid: int = 100) -> ZnodeStat:
    return ZnodeStat(czxid=czxid, mzxid=czxid, version=version, ctime_ms=1_700_000_000_000,
                     mtime_ms=1_700_000_000_000)


def scram_text(salt: bytes = SALT, stored: bytes = STORED, server: bytes = SERVER) -> str:
    b64 = base64.b64encode
    return (f"salt={b64(salt).decode()},stored_key={b64(stored).decode()},"
            f"server_key={b64(server).decode()},iterations=4096")


def conf(path: str, config: dict[str, str]) -> ConfigZnode:
    return ConfigZnode(path, config, stat())


def broker(bid: int, rack: str | None = "r1") -> Broker:
    return Broker(
        broker_id=bid, json_version=5,
        endpoints=(BrokerEndpoint("PLAINTEXT", f"h{bid}", 9092, "PLAINTEXT"),
                   BrokerEndpoint("SSL", f"h{bid}", 9093, "SSL")),
        rack=rack, jmx_port=-1, timestamp_ms=1, features={}, stat=stat(czxid=1000 + bid),
    )


def topic(name: str, tid: str, parts: int, **kw: object) -> Topic:
    assignment = {p: (1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3) for p in range(parts)}
    return Topic(name=name, json_version=3, topic_id=tid, assignment=assignment,
                 adding_replicas=kw.get("adding", {}),  # type: ignore[arg-type]
                 removing_replicas=kw.get("removing", {}),  # type: ignore[arg-type]
                 stat=stat())


def state(t: Topic, p: int, *, version: int = 3, recovering: bool = False) -> PartitionState:
    reps = t.assignment[p]
    return PartitionState(t.name, p, leader=reps[0], leader_epoch=5, controller_epoch=1,
                          isr=reps, leader_recovery_state=1 if recovering else 0,
                          stat=stat(version=version))


ORDERS = "AAAAAAAAAAAAAAAAAAAAAQ"
EVENTS = "AAAAAAAAAAAAAAAAAAAAAg"
GONE = "AAAAAAAAAAAAAAAAAAAAAw"


def everything() -> ClusterSnapshot:
    orders = topic("orders", ORDERS, 12, adding={1: (4,)}, removing={1: (3,)})
    events = topic("events", EVENTS, 3)
    gone = topic("gone", GONE, 2)
    states = {(orders.name, p): state(orders, p, recovering=p == 2) for p in range(12) if p != 5}
    states.update({(events.name, p): state(events, p) for p in range(3)})
    return ClusterSnapshot(
        cluster_id=ClusterIdZnode("Z2kXampleClusterId0001", stat()),
        brokers={b: broker(b) for b in (1, 2, 3)} | {4: broker(4, rack=None)},
        topics={"orders": orders, "events": events, "gone": gone},
        partition_states=states,
        pending_deletions=frozenset({"gone"}),
        topic_configs={"orders": conf("topics/orders", {"retention.ms": "1000",
                                                        "cleanup.policy": "compact"}),
                       "gone": conf("topics/gone", {"retention.ms": "5"})},
        broker_configs={"<default>": conf("brokers/<default>", {"log.cleaner.threads": "2"}),
                        "1": conf("brokers/1", {"max.connections": "100"})},
        user_configs={
            "alice%40example.com": conf("users/alice%40example.com",
                                        {"producer_byte_rate": "1024",
                                         "SCRAM-SHA-256": scram_text()}),
            "<default>": conf("users/<default>", {"consumer_byte_rate": "2048"}),
        },
        client_configs={"app": conf("clients/app", {"request_percentage": "50"})},
        user_client_configs={("bob", "<default>"): conf("users/bob/clients/<default>",
                                                       {"producer_byte_rate": "10"})},
        ip_configs={"10.0.0.1": conf("ips/10.0.0.1", {"connection_creation_rate": "7"})},
        acls=(
            AclResource("LITERAL", "Topic", "orders",
                        (AclEntry("User:alice", "Allow", "Read", "*"),
                         AclEntry("User:bob", "Deny", "Write", "10.0.0.2")), stat()),
            AclResource("PREFIXED", "Group", "app-",
                        (AclEntry("User:alice", "Allow", "Read", "*"),), stat()),
            AclResource("LITERAL", "Cluster", "kafka-cluster",
                        (AclEntry("User:admin", "Allow", "IdempotentWrite", "*"),), stat()),
        ),
        delegation_tokens={"tok1": DelegationToken("tok1", 3, "User%3Aalice", "User%3Aalice",
                                                   ("User%3Abob",), 10, 30, 20, stat())},
        producer_id_block=ProducerIdBlock(1, 2, 5000, 5999, stat()),
    )


def quorum_of(snapshot: ClusterSnapshot, mv: str = "3.9-IV0") -> MetadataImage:
    result = translate(snapshot, TranslationOptions(metadata_version=parse_target_version(mv)))
    assert not result.blockers, result.blockers
    loaded = load_records(result.records)
    assert loaded.open_transaction is None
    return loaded.image


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.6-IV2", "3.7-IV4", "3.9-IV0"])
def test_translator_output_replays_to_the_expected_image(mv: str) -> None:
    snap = everything()
    if mv == "3.4-IV0":  # SCRAM and tokens cannot be written below 3.5-IV2 / 3.6-IV2
        users = dict(snap.user_configs)
        users.pop("alice%40example.com")
        snap = dataclasses.replace(snap, user_configs=users, delegation_tokens={})
    assert compare(expected_image(snap), quorum_of(snap, mv)) == []


def test_expected_image_follows_kafkas_mapping() -> None:
    img = expected_image(everything())
    assert set(img.topics.by_name) == {"orders", "events"}  # pending deletion left out
    assert (2, "gone") not in img.configs.resources  # ... and its configs
    missing = img.topics.by_name["orders"].partitions[5]  # no state znode
    assert (missing.isr, missing.leader, missing.leader_epoch, missing.partition_epoch) == (
        missing.replicas, missing.replicas[0], 0, 0)
    p1 = img.topics.by_name["orders"].partitions[1]
    assert (p1.adding_replicas, p1.removing_replicas, p1.partition_epoch) == ((4,), (3,), 3)
    assert img.topics.by_name["orders"].partitions[2].leader_recovery_state == 1
    assert img.configs.resources[(4, "")] == {"log.cleaner.threads": "2"}
    assert img.client_quotas.entities[(("user", "alice@example.com"),)] == {
        "producer_byte_rate": 1024.0}
    assert (("user", None),) in img.client_quotas.entities
    assert (("client-id", None), ("user", "bob")) in img.client_quotas.entities
    assert img.producer_ids.next_producer_id == 6000  # block_end + 1, never block_start
    assert ("alice@example.com", 1) in img.scram.credentials
    tok = img.delegation_tokens.tokens["tok1"]
    assert (tok.owner, tok.renewers) == ("User:alice", ("User:bob",))
    assert img.cluster.brokers[2].epoch == 1002


def _drift(**changes: object) -> list[tuple[str, str, str]]:
    base = everything()
    quorum = quorum_of(base)
    drifted = dataclasses.replace(base, **changes)  # type: ignore[arg-type]
    return [(d.kind, d.key, d.field) for d in compare(expected_image(drifted), quorum)]


def test_isr_and_leader_drift() -> None:
    snap = everything()
    t = snap.topics["orders"]
    states = dict(snap.partition_states)
    s = states[("orders", 3)]
    states[("orders", 3)] = dataclasses.replace(s, isr=s.isr[:1], stat=stat(version=4))
    s7 = states[("orders", 7)]
    states[("orders", 7)] = dataclasses.replace(s7, leader=t.assignment[7][1], leader_epoch=6)
    got = _drift(partition_states=states)
    assert got == [
        ("partition", "orders-3", "isr"),
        ("partition", "orders-3", "partitionEpoch"),
        ("partition", "orders-7", "leader"),
        ("partition", "orders-7", "leaderEpoch"),
    ]


def test_config_value_new_and_deleted_topic_drift() -> None:
    snap = everything()
    topics = dict(snap.topics)
    topics["fresh"] = topic("fresh", "AAAAAAAAAAAAAAAAAAAABA", 1)
    del topics["events"]
    configs = dict(snap.topic_configs)
    configs["orders"] = conf("topics/orders", {"retention.ms": "2000",
                                               "cleanup.policy": "compact"})
    got = _drift(topics=topics, topic_configs=configs)
    assert got == [
        ("topic", "events", "<exists>"),
        ("topic", "fresh", "<exists>"),
        ("partition", "events-0", "<exists>"),
        ("partition", "events-1", "<exists>"),
        ("partition", "events-2", "<exists>"),
        ("partition", "fresh-0", "<exists>"),
        ("topic_config", "orders", "retention.ms"),
    ]


def test_quota_acl_scram_broker_token_and_producer_id_drift() -> None:
    snap = everything()
    users = dict(snap.user_configs)
    users["alice%40example.com"] = conf("users/alice%40example.com", {
        "producer_byte_rate": "999", "SCRAM-SHA-256": scram_text(salt=b"another-salt-xyz")})
    acls = snap.acls[:2] + (AclResource("LITERAL", "Cluster", "kafka-cluster",
                                        (AclEntry("User:admin", "Allow", "Alter", "*"),),
                                        stat()),)
    brokers = dict(snap.brokers)
    brokers[4] = dataclasses.replace(broker(4, rack="r9"), stat=stat(czxid=777))
    block = ProducerIdBlock(1, 2, 6000, 6999, stat())
    tokens = {"tok1": dataclasses.replace(snap.delegation_tokens["tok1"],
                                          expiry_timestamp_ms=25)}
    got = _drift(user_configs=users, acls=acls, brokers=brokers, producer_id_block=block,
                 delegation_tokens=tokens)
    assert got == [
        ("broker", "4", "brokerEpoch"),
        ("broker", "4", "rack"),
        ("client_quota", "user=alice@example.com", "producer_byte_rate"),
        ("scram", "alice@example.com/SCRAM-SHA-256", "credential"),
        ("acl", "CLUSTER:LITERAL:kafka-cluster User:admin host=* ALTER ALLOW", "<exists>"),
        ("acl", "CLUSTER:LITERAL:kafka-cluster User:admin host=* IDEMPOTENT_WRITE ALLOW",
         "<exists>"),
        ("producer_ids", "cluster", "nextProducerId"),
        ("delegation_token", "tok1", "expirationTimestamp"),
    ]


def test_scram_difference_never_holds_the_credential() -> None:
    users = dict(everything().user_configs)
    users["alice%40example.com"] = conf("users/alice%40example.com", {
        "SCRAM-SHA-256": scram_text(stored=b"T" * 32), "producer_byte_rate": "1024"})
    report = parity_report(expected_image(dataclasses.replace(everything(), user_configs=users)),
                           quorum_of(everything()))
    text = json.dumps(report.to_json())
    assert not report.parity
    assert report.differences[0].secret
    for secret in (SALT, STORED, SERVER, b"T" * 32):
        assert base64.b64encode(secret).decode() not in text
        assert secret.decode() not in text
    assert "sha256:" not in text  # strict policy hides even the digest
    assert "<redacted>" in text


def test_sensitive_broker_config_compared_by_presence_only() -> None:
    zk = {"ssl.keystore.password": "<present>"}
    assert diff_rows("broker_config", "1", zk, {"ssl.keystore.password": "<present>"}) == []
    [d] = diff_rows("broker_config", "1", zk, None)
    assert (d.field, d.zookeeper, d.quorum, d.secret) == ("ssl.keystore.password",
                                                          "<present>", None, True)
    img = expected_image(dataclasses.replace(everything(), broker_configs={
        "1": conf("brokers/1", {"listener.name.ssl.ssl.key.password": "ENCRYPTED-CIPHER"})}))
    rows = image_rows(img, "broker_config")
    assert rows == {"1": {"listener.name.ssl.ssl.key.password": "<present>"}}


def test_checked_counts_and_stable_order() -> None:
    report = parity_report(expected_image(everything()), quorum_of(everything()))
    assert report.parity
    assert report.checked == {
        "broker": 4, "topic": 2, "partition": 15, "topic_config": 1, "broker_config": 2,
        "client_quota": 5, "scram": 1, "acl": 4, "producer_ids": 1, "delegation_token": 1,
    }
    assert report.to_json()["parity"] is True
    keys = ["t-10", "t-2", "t-1", "a-9"]
    assert sorted(keys, key=natural_key) == ["a-9", "t-1", "t-2", "t-10"]


def test_images_compare_as_values_and_pickle() -> None:
    import pickle

    a, b = expected_image(everything()), expected_image(everything())
    assert a == b
    assert pickle.loads(pickle.dumps(a)) == a
    assert isinstance(a.topics.by_name, FrozenMap)
    with pytest.raises(TypeError):
        a.topics.by_name["x"] = None  # type: ignore[index]


def test_a_registration_the_broker_made_is_judged_without_its_epoch() -> None:
    """A broker that registered itself (with the stand-in, or any KRaft controller) has the
    offset of its RegisterBrokerRecord as epoch (Kafka's rule), never ZooKeeper's czxid: parity
    leaves the epoch out for it and still compares listeners and rack."""
    snap = everything()
    records = [r for r in translate(snap, TranslationOptions(
        metadata_version=parse_target_version("3.9"))).records if "TRANSACTION" not in r.type]
    own = next(r for r in records if r.type == "REGISTER_BROKER_RECORD"
               and r.data["brokerId"] == 1)
    at = len(records)  # the broker's own record comes last, at this offset
    mine = dataclasses.replace(own, data={**own.data, "brokerEpoch": at,
                                          "incarnationId": "7C9rNwqDS8-Oo6l1Y0w8Nw"})
    image = load_records([*records, mine]).image
    assert compare(expected_image(snap), image) == []
    moved = dataclasses.replace(mine, data={**mine.data, "rack": "elsewhere"})
    diffs = compare(expected_image(snap), load_records([*records, moved]).image)
    assert [(d.kind, d.key, d.field) for d in diffs] == [("broker", "1", "rack")]
    # re-registered with the same incarnation: the stand-in keeps its first epoch
    again = load_records([*records, mine, dataclasses.replace(own, data={**mine.data})]).image
    assert again.cluster.brokers[1].epoch == at
    assert compare(expected_image(snap), again) == []
    # zk2kraft's own copy of an older znode of broker 1 stays a difference
    older = dataclasses.replace(snap.brokers[1], stat=stat(czxid=snap.brokers[1].stat.czxid - 1))
    diffs = compare(expected_image(dataclasses.replace(snap, brokers={**snap.brokers, 1: older})),
                    load_records(records).image)
    assert [(d.kind, d.key, d.field) for d in diffs] == [("broker", "1", "brokerEpoch")]
