"""Hand-written ZooKeeper model objects for translation and mapping tests.

Builders of `zkreader` models (`mk_broker`, `mk_topic`, `mk_state`, `cfg`, `st`), the
`TranslationOptions` most tests use (`opts`), and `full_snapshot()`: a small cluster with one of
everything and the traps of Kafka's old bugs. Values are facts written out by hand, never taken
from the code under test. Shared by tests/unit/migrate/test_translate.py and test_entities.py.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping

from migrate import TranslationOptions
from migrate.translate.framing import parse_target_version
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

__all__ = ["CLUSTER_ID", "SALT", "SCRAM_256", "SCRAM_512", "SERVER", "STORED", "cfg",
           "full_snapshot", "mk_broker", "mk_state", "mk_topic", "opts", "st"]

CLUSTER_ID = "q1Sh-9_ISia_zwGINzRvyQ"

SALT = base64.b64encode(b"salty-salt").decode()
STORED = base64.b64encode(b"\x00stored\xff").decode()
SERVER = base64.b64encode(b"\x01server\xfe").decode()
SCRAM_256 = f"salt={SALT},stored_key={STORED},server_key={SERVER},iterations=4096"
SCRAM_512 = f"salt={SERVER},stored_key={SALT},server_key={STORED},iterations=8192"


def st(czxid: int = 100, version: int = 0) -> ZnodeStat:
    return ZnodeStat(czxid=czxid, mzxid=czxid, version=version, ctime_ms=1, mtime_ms=2)


def mk_broker(
    broker_id: int,
    *,
    czxid: int = 4096,
    rack: str | None = None,
    endpoints: Iterable[tuple[str, str, int, str]] = (),
    features: Mapping[str, tuple[int, int]] | None = None,
) -> Broker:
    eps = tuple(BrokerEndpoint(*e) for e in endpoints) or (
        BrokerEndpoint("PLAINTEXT", f"b{broker_id}", 9092, "PLAINTEXT"),
    )
    return Broker(broker_id, 5, eps, rack, -1, 1, dict(features or {}), st(czxid))


def mk_topic(
    name: str,
    assignment: Mapping[int, tuple[int, ...]],
    *,
    topic_id: str | None = "AAAAAAAAAAAAAAAAAAAAAw",
    adding: Mapping[int, tuple[int, ...]] | None = None,
    removing: Mapping[int, tuple[int, ...]] | None = None,
) -> Topic:
    return Topic(name, 3, topic_id, dict(assignment), dict(adding or {}), dict(removing or {}),
                 st())


def mk_state(
    topic: str,
    partition: int,
    *,
    leader: int,
    isr: tuple[int, ...],
    leader_epoch: int = 7,
    controller_epoch: int = 3,
    version: int = 11,
    recovery: int = 0,
) -> PartitionState:
    return PartitionState(topic, partition, leader, leader_epoch, controller_epoch, isr, recovery,
                          st(version=version))


def cfg(entity_path: str, config: Mapping[str, str]) -> ConfigZnode:
    return ConfigZnode(entity_path, dict(config), st())


def opts(mv: str = "3.9-IV0", secret: str | None = None) -> TranslationOptions:
    return TranslationOptions(metadata_version=parse_target_version(mv),
                              password_encoder_secret=secret)


def full_snapshot() -> ClusterSnapshot:
    """A small cluster with one of everything (and the traps of Kafka's old bugs)."""
    brokers = {
        1: mk_broker(1, czxid=4096, rack="r1"),
        2: mk_broker(2, czxid=4200),
        10: mk_broker(10, czxid=5000),
    }
    topics = {
        "orders": mk_topic("orders", {0: (1, 2), 1: (2, 10), 2: (10, 1)},
                           topic_id="b6XP0CJvTPmZ9aaiSNa5NA"),
        "alpha": mk_topic("alpha", {0: (2, 1)}, topic_id="QmE-4ooBSEWo02xn3zYtYA"),
        "doomed": mk_topic("doomed", {0: (1,)}, topic_id="ZbQ3ZSXsTc6tNZSBoRIh2w"),
    }
    states = {
        ("orders", 0): mk_state("orders", 0, leader=1, isr=(1, 2)),
        ("orders", 1): mk_state("orders", 1, leader=2, isr=(2,), version=3),
        ("orders", 2): mk_state("orders", 2, leader=10, isr=(10, 1)),
        ("alpha", 0): mk_state("alpha", 0, leader=2, isr=(2, 1)),
        ("doomed", 0): mk_state("doomed", 0, leader=1, isr=(1,)),
    }
    return ClusterSnapshot(
        cluster_id=ClusterIdZnode(CLUSTER_ID, st()),
        brokers=brokers,
        topics=topics,
        partition_states=states,
        pending_deletions=frozenset({"doomed"}),
        topic_configs={
            "orders": cfg("topics/orders", {"retention.ms": "1000", "cleanup.policy": "compact"}),
            "doomed": cfg("topics/doomed", {"retention.ms": "5"}),
        },
        broker_configs={
            "1": cfg("brokers/1", {"log.cleaner.threads": "2"}),
            "<default>": cfg("brokers/<default>", {"num.io.threads": "16"}),
        },
        user_configs={
            "alice%40example.com": cfg(
                "users/alice%40example.com",
                {"producer_byte_rate": "1024", "SCRAM-SHA-256": SCRAM_256},
            ),
            "<default>": cfg("users/<default>", {"consumer_byte_rate": "2048"}),
        },
        client_configs={"app-1": cfg("clients/app-1", {"request_percentage": "50.5"})},
        user_client_configs={
            ("bob", "<default>"): cfg("users/bob/clients/<default>", {"producer_byte_rate": "9"}),
        },
        ip_configs={"10.0.0.1": cfg("ips/10.0.0.1", {"connection_creation_rate": "10"})},
        acls=(
            AclResource("PREFIXED", "Topic", "ord", (AclEntry("User:bob", "Allow", "Write", "*"),),
                        st()),
            AclResource("LITERAL", "Topic", "orders", (
                AclEntry("User:alice", "Allow", "Read", "*"),
                AclEntry("User:alice", "Deny", "Write", "10.0.0.9"),
            ), st()),
            AclResource("LITERAL", "Cluster", "kafka-cluster",
                        (AclEntry("User:admin", "Allow", "All", "*"),), st()),
        ),
        delegation_tokens={
            "tok1": DelegationToken("tok1", 3, "User%3Aalice", None, ("User%3Abob",), 10, 20, 15,
                                    st()),
        },
        producer_id_block=ProducerIdBlock(1, 2, 5000, 5999, st()),
    )
