"""Translation rules (issue 4 item 1): each rule, with the case that catches Kafka's old bug."""

from __future__ import annotations

import pickle

import pytest

from migrate import (
    BadFlagError,
    TranslationError,
    TranslationOptions,
    TranslationResult,
    translate,
)
from migrate.preflight.checks import preflight
from migrate.translate.acls import acl_records
from migrate.translate.brokers import broker_records
from migrate.translate.framing import parse_target_version, producer_id_records
from migrate.translate.quotas import quota_records
from migrate.translate.topics import topic_records
from tests.support.snapshots import (
    CLUSTER_ID,
    SALT,
    SCRAM_256,
    SCRAM_512,
    SERVER,
    cfg,
    full_snapshot,
    mk_broker,
    mk_state,
    mk_topic,
    opts,
    st,
)
from verify import compare, expected_image, load_records
from writers import MetadataRecord, decode_record, encode_record, parse_metadata_version
from writers.codec.schema import record_spec
from zkreader import (
    AclEntry,
    AclResource,
    ClusterSnapshot,
    ProducerIdBlock,
)

# Encrypted by Java's own JCE with Kafka's PasswordEncoder parameters (PBKDF2WithHmacSHA512,
# AES/CBC/PKCS5Padding, 128-bit key, 4096 iterations), secret "enc-secret-1".
JAVA_SECRET = "enc-secret-1"
JAVA_CBC = (
    "keyFactoryAlgorithm:PBKDF2WithHmacSHA512,cipherAlgorithm:AES/CBC/PKCS5Padding,keyLength:128,"
    "salt:RcGR82cRRQDhxpAJXVHHvhDs6Kz+iTG0avi0p8h1CxZN4SWQ9qGWaguG9/WElFvfYi7vl78pIuPAG4KJUPF/Gha"
    "B2GpTKs32+axgXjKn8oh7xZeJ19HvvwgoPRvyL5f8mWJENORaYNAtbb9Y7BUkU8uPFz+G+VMLyAmp42jEYOblSpLMlmm"
    "Z/sVbJgl4c9CTY6ndYZvpY9alFjpqPT3dCyvpatoT6upCAp2jUieXJCIHtUeAZtWkaveMKPyUjgxfW6FSwcIiYzsTJM6"
    "4FS8TcUc4ddy9sJ8IdozhbLUhcass9xcumqvbilG7EB3HLt3i2+mwi1OKJ5jeUZUnO+hiZA==,iterations:4096,"
    "encryptedPassword:lIF2oPqXcmcsuLKWthDoUSTtKEMd1RcrxRiz5oep0pE=,passwordLength:18,"
    "initializationVector:bBNYNlNMoVEcJBk4IFet/g=="
)
JAVA_PLAIN = "keystore-pässwörd€"


def of_type(result: TranslationResult | list[MetadataRecord], type_name: str) -> list[dict]:
    records = result.records if isinstance(result, TranslationResult) else result
    return [dict(r.data) for r in records if r.type == type_name]


# --- framing ---------------------------------------------------------------------------------


def test_feature_level_first_and_transaction_framing_at_39() -> None:
    result = translate(full_snapshot(), opts("3.9-IV0"))
    types = [r.type for r in result.records]
    assert types[0] == "FEATURE_LEVEL_RECORD"
    assert result.records[0].data == {"name": "metadata.version", "featureLevel": 21}
    assert types[1] == "BEGIN_TRANSACTION_RECORD"
    assert result.records[1].data == {"name": "ZK Migration"}
    assert types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]
    assert result.records[-2].data == {"zkMigrationState": 1}
    assert types.count("BEGIN_TRANSACTION_RECORD") == 1
    assert types.count("END_TRANSACTION_RECORD") == 1
    assert result.warnings == []


@pytest.mark.parametrize(
    ("mv", "level", "transactions"),
    [("3.4-IV0", 8, False), ("3.6-IV0", 12, False), ("3.6-IV1", 13, True), ("3.7-IV2", 17, True)],
)
def test_transactions_only_from_36_iv1(mv: str, level: int, transactions: bool) -> None:
    result = translate(ClusterSnapshot(), opts(mv))
    types = [r.type for r in result.records]
    assert result.records[0].data["featureLevel"] == level
    assert ("BEGIN_TRANSACTION_RECORD" in types) is transactions
    assert ("END_TRANSACTION_RECORD" in types) is transactions
    # the migration state record closes the migration at every supported version
    assert types[-1 - transactions] == "ZK_MIGRATION_STATE_RECORD"
    codes = [w.code for w in result.warnings]
    assert ("NO_METADATA_TRANSACTIONS" in codes) is (not transactions)


@pytest.mark.parametrize("mv", ["3.3-IV3", "3.0-IV1", "9.9-IV9", "latest"])
def test_metadata_version_without_migration_support_is_a_bad_flag(mv: str) -> None:
    with pytest.raises(BadFlagError, match="--metadata-version"):
        translate(ClusterSnapshot(), opts(mv))


# --- brokers ---------------------------------------------------------------------------------


def test_register_broker_record_fields_at_39() -> None:
    broker = mk_broker(
        3,
        czxid=77_000,
        rack="rack-a",
        endpoints=[
            ("INTERNAL", "10.0.0.3", 9091, "SASL_SSL"),
            ("EXTERNAL", "b3.example.com", 9093, "SSL"),
            ("REPL", "10.0.0.3", 9094, "SASL_PLAINTEXT"),
            ("PLAIN", "10.0.0.3", 9092, "PLAINTEXT"),
        ],
        features={"metadata.version": (1, 21), "group.version": (0, 1)},
    )
    [record] = broker_records(broker, parse_metadata_version("3.9-IV0"), CLUSTER_ID)
    assert record.type == "REGISTER_BROKER_RECORD"
    assert record.version == 3
    data = record.data
    assert data["brokerId"] == 3
    assert data["isMigratingZkBroker"] is True
    assert data["fenced"] is True
    assert data["brokerEpoch"] == 77_000  # the znode's czxid, ZK-mode Kafka's broker epoch
    assert data["rack"] == "rack-a"
    assert data["logDirs"] == []
    assert data["endPoints"] == [
        {"name": "INTERNAL", "host": "10.0.0.3", "port": 9091, "securityProtocol": 3},
        {"name": "EXTERNAL", "host": "b3.example.com", "port": 9093, "securityProtocol": 1},
        {"name": "REPL", "host": "10.0.0.3", "port": 9094, "securityProtocol": 2},
        {"name": "PLAIN", "host": "10.0.0.3", "port": 9092, "securityProtocol": 0},
    ]
    # metadata.version pinned to the migrated level, whatever range the znode advertised
    assert data["features"] == [
        {"name": "metadata.version", "minSupportedVersion": 21, "maxSupportedVersion": 21},
        {"name": "group.version", "minSupportedVersion": 0, "maxSupportedVersion": 1},
    ]
    incarnation = data["incarnationId"]
    assert isinstance(incarnation, str) and len(incarnation) == 22
    assert incarnation not in ("AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ")
    assert not incarnation.startswith("-")


@pytest.mark.parametrize(("mv", "version"), [("3.4-IV0", 2), ("3.7-IV1", 2), ("3.7-IV2", 3)])
def test_register_broker_record_version_follows_metadata_version(mv: str, version: int) -> None:
    [record] = broker_records(mk_broker(1), parse_metadata_version(mv), CLUSTER_ID)
    assert record.version == version
    assert ("logDirs" in record.data) is (version >= 3)


def test_incarnation_id_is_derived_from_content() -> None:
    mv = parse_metadata_version("3.9-IV0")
    first = broker_records(mk_broker(1, czxid=10), mv, CLUSTER_ID)[0].data["incarnationId"]
    again = broker_records(mk_broker(1, czxid=10), mv, CLUSTER_ID)[0].data["incarnationId"]
    re_registered = broker_records(mk_broker(1, czxid=11), mv, CLUSTER_ID)[0].data
    other_broker = broker_records(mk_broker(2, czxid=10), mv, CLUSTER_ID)[0].data
    other_cluster = broker_records(mk_broker(1, czxid=10), mv, "x" * 22)[0].data
    assert first == again
    assert len({first, re_registered["incarnationId"], other_broker["incarnationId"],
                other_cluster["incarnationId"]}) == 4


def test_unknown_security_protocol_names_the_broker_path() -> None:
    broker = mk_broker(4, endpoints=[("X", "h", 1, "GSSAPI_MAGIC")])
    with pytest.raises(TranslationError, match="/brokers/ids/4"):
        broker_records(broker, parse_metadata_version("3.9-IV0"), CLUSTER_ID)


# --- order (I2) --------------------------------------------------------------------------------


def test_brokers_precede_partitions_and_topics_precede_their_records() -> None:
    result = translate(full_snapshot(), opts())
    registered: set[int] = set()
    topics_seen: dict[str, str] = {}  # topic id -> name
    for record in result.records:
        data = record.data
        if record.type == "REGISTER_BROKER_RECORD":
            registered.add(data["brokerId"])  # type: ignore[arg-type]
        elif record.type == "TOPIC_RECORD":
            topics_seen[data["topicId"]] = data["name"]  # type: ignore[index]
        elif record.type == "PARTITION_RECORD":
            assert data["topicId"] in topics_seen
            assert set(data["replicas"]) <= registered  # type: ignore[arg-type]
        elif record.type == "CONFIG_RECORD" and data["resourceType"] == 2:
            assert data["resourceName"] in topics_seen.values()
    assert registered == {1, 2, 10}


def test_section_order_matches_kafka() -> None:
    types = [r.type for r in translate(full_snapshot(), opts()).records]
    first = {t: types.index(t) for t in dict.fromkeys(types)}
    last = {t: len(types) - 1 - types[::-1].index(t) for t in dict.fromkeys(types)}
    assert last["REGISTER_BROKER_RECORD"] < first["TOPIC_RECORD"]
    assert last["PARTITION_RECORD"] < first["USER_SCRAM_CREDENTIAL_RECORD"]
    assert last["CLIENT_QUOTA_RECORD"] < first["PRODUCER_IDS_RECORD"]
    assert first["PRODUCER_IDS_RECORD"] < first["ACCESS_CONTROL_ENTRY_RECORD"]
    assert last["ACCESS_CONTROL_ENTRY_RECORD"] < first["DELEGATION_TOKEN_RECORD"]
    assert last["DELEGATION_TOKEN_RECORD"] < first["ZK_MIGRATION_STATE_RECORD"]
    # broker configs come after every topic's records
    broker_cfg = [i for i, r in enumerate(translate(full_snapshot(), opts()).records)
                  if r.type == "CONFIG_RECORD" and r.data["resourceType"] == 4]
    assert min(broker_cfg) > last["PARTITION_RECORD"]


def test_topics_by_name_each_topic_then_configs_then_partitions_by_number() -> None:
    topic = mk_topic("t", {p: (1,) for p in (10, 2, 9, 0, 1)})
    config = cfg("topics/t", {"segment.ms": "1", "cleanup.policy": "delete"})
    records = topic_records(topic, {}, config, parse_metadata_version("3.9-IV0"))
    assert [r.type for r in records] == ["TOPIC_RECORD"] + ["CONFIG_RECORD"] * 2 + [
        "PARTITION_RECORD"
    ] * 5
    assert [r.data["name"] for r in records[1:3]] == ["cleanup.policy", "segment.ms"]
    # numeric, not string, order: a string sort would put 10 before 2
    assert [r.data["partitionId"] for r in records[3:]] == [0, 1, 2, 9, 10]
    names = [d["name"] for d in of_type(translate(full_snapshot(), opts()), "TOPIC_RECORD")]
    assert names == ["alpha", "orders"]


# --- topics and partitions ---------------------------------------------------------------------


def test_topic_id_is_kept() -> None:
    [alpha, orders] = of_type(translate(full_snapshot(), opts()), "TOPIC_RECORD")
    assert alpha == {"name": "alpha", "topicId": "QmE-4ooBSEWo02xn3zYtYA"}
    assert orders == {"name": "orders", "topicId": "b6XP0CJvTPmZ9aaiSNa5NA"}


def test_partition_fields_come_from_state_and_epoch_is_znode_version() -> None:
    topic = mk_topic("t", {0: (3, 1, 2)}, adding={0: (3,)}, removing={0: (4,)})
    state = mk_state("t", 0, leader=1, isr=(1, 2), leader_epoch=7, controller_epoch=99,
                     version=42, recovery=1)
    [_, record] = topic_records(topic, {0: state}, None, parse_metadata_version("3.9-IV0"))
    assert record.version == 0  # Kafka's migration writes v0 at every metadata.version
    assert record.data == {
        "partitionId": 0,
        "topicId": "AAAAAAAAAAAAAAAAAAAAAw",
        "replicas": [3, 1, 2],  # from the topic znode, in its order
        "isr": [1, 2],
        "removingReplicas": [4],
        "addingReplicas": [3],
        "leader": 1,
        "leaderEpoch": 7,
        "partitionEpoch": 42,  # state znode version, not leader_epoch and not controller_epoch
        "leaderRecoveryState": 1,
    }


def test_missing_partition_state_gets_kafkas_default() -> None:
    topic = mk_topic("t", {0: (5, 6, 7), 1: (6, 7)})
    state = mk_state("t", 1, leader=7, isr=(7,))
    records = topic_records(topic, {0: None, 1: state}, None, parse_metadata_version("3.9-IV0"))
    p0 = records[1].data
    assert p0["isr"] == [5, 6, 7]
    assert p0["leader"] == 5
    assert p0["leaderEpoch"] == 0
    assert p0["partitionEpoch"] == 0
    assert p0["leaderRecoveryState"] == 0
    assert records[2].data["leader"] == 7
    # a state absent from the mapping is the same as None
    assert topic_records(topic, {1: state}, None, parse_metadata_version("3.9-IV0")) == records


def test_offline_partitions_name_no_leader_and_keep_zookeepers_isr_and_epochs() -> None:
    """Every broker is stopped: leader -1, so KRaft's controller elects each leader from the ISR
    after the leader's registration (issue 18); the rest is ZooKeeper's."""
    topic = mk_topic("t", {0: (3, 1, 2), 1: (2, 3)})
    state = mk_state("t", 0, leader=1, isr=(1, 2), leader_epoch=7, version=42)
    mv = parse_metadata_version("3.9-IV0")
    [_, p0, p1] = topic_records(topic, {0: state, 1: None}, None, mv, "cluster", offline=True)
    assert (p0.data["leader"], p0.data["isr"], p0.data["leaderEpoch"],
            p0.data["partitionEpoch"]) == (-1, [1, 2], 7, 42)
    assert (p1.data["leader"], p1.data["isr"], p1.data["leaderEpoch"]) == (-1, [2, 3], 0)
    online = topic_records(topic, {0: state, 1: None}, None, mv)
    assert [r.data["leader"] for r in online[1:]] == [1, 2]


def test_offline_records_replay_to_the_offline_expected_image() -> None:
    snap = full_snapshot()
    options = TranslationOptions(metadata_version=parse_target_version("3.9-IV0"), offline=True)
    loaded = load_records(translate(snap, options).records)
    assert compare(expected_image(snap, offline=True), loaded.image) == []
    leaders = {p.leader for t in loaded.image.topics.by_name.values()
               for p in t.partitions.values()}
    assert leaders == {-1}
    assert compare(expected_image(snap), loaded.image) != []  # online expects ZooKeeper's


def test_pending_deletions_are_skipped_with_their_configs() -> None:
    """KAFKA-15605: Kafka <= 3.6.0 migrated topics queued for deletion as live topics."""
    result = translate(full_snapshot(), opts())
    assert "doomed" not in [d["name"] for d in of_type(result, "TOPIC_RECORD")]
    assert "ZbQ3ZSXsTc6tNZSBoRIh2w" not in [d["topicId"] for d in of_type(result,
                                                                           "PARTITION_RECORD")]
    assert "doomed" not in [d["resourceName"] for d in of_type(result, "CONFIG_RECORD")]


def test_topic_without_id_is_left_out_and_blocked_by_preflight_alone() -> None:
    snap = ClusterSnapshot(topics={"old": mk_topic("old", {0: (1,)}, topic_id=None)},
                           topic_configs={"old": cfg("topics/old", {"retention.ms": "1"})})
    result = translate(snap, opts())
    assert result.blockers == []  # one place raises TOPIC_WITHOUT_ID: pre-flight
    assert [(b.code, b.path) for b in preflight(snap).blockers if b.code.startswith("TOPIC")] == [
        ("TOPIC_WITHOUT_ID", "/brokers/topics/old")
    ]
    assert of_type(result, "TOPIC_RECORD") == of_type(result, "PARTITION_RECORD") == []
    assert of_type(result, "CONFIG_RECORD") == []
    with pytest.raises(TranslationError, match="/brokers/topics/old"):
        topic_records(snap.topics["old"], {}, None, parse_metadata_version("3.9-IV0"))


def test_topic_configs_are_resource_type_2_sorted_by_key() -> None:
    topic_cfgs = [d for d in of_type(translate(full_snapshot(), opts()), "CONFIG_RECORD")
                  if d["resourceType"] == 2]
    assert topic_cfgs == [
        {"resourceType": 2, "resourceName": "orders", "name": "cleanup.policy",
         "value": "compact"},
        {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "1000"},
    ]


# --- broker configs and passwords --------------------------------------------------------------


def test_broker_configs_default_entity_is_empty_name() -> None:
    snap = ClusterSnapshot(broker_configs={
        "10": cfg("brokers/10", {"a": "1"}),
        "2": cfg("brokers/2", {"b": "2"}),
        "<default>": cfg("brokers/<default>", {"c": "3"}),
    })
    broker_cfgs = of_type(translate(snap, opts()), "CONFIG_RECORD")
    assert [(d["resourceType"], d["resourceName"], d["name"]) for d in broker_cfgs] == [
        (4, "", "c"),  # never the literal "<default>"
        (4, "2", "b"),
        (4, "10", "a"),  # numeric order
    ]


def test_encrypted_password_without_secret_is_a_blocker_never_ciphertext() -> None:
    snap = ClusterSnapshot(broker_configs={"1": cfg("brokers/1", {
        "listener.name.internal.ssl.key.password": JAVA_CBC,
        "log.retention.ms": "5",
    })})
    result = translate(snap, opts(secret=None))
    assert [(b.code, b.path) for b in result.blockers] == [
        ("BROKER_PASSWORD_NO_SECRET", "/config/brokers/1")
    ]
    assert "listener.name.internal.ssl.key.password" in result.blockers[0].message
    values = [d["value"] for d in of_type(result, "CONFIG_RECORD")]
    assert values == ["5"]
    assert not any(JAVA_CBC[:40] in repr(r) for r in result.records)
    assert JAVA_CBC not in repr(result.blockers)


def test_encrypted_password_is_decoded_with_the_secret() -> None:
    """KAFKA-14801: Kafka 3.4 copied the ciphertext into KRaft."""
    snap = ClusterSnapshot(broker_configs={"<default>": cfg("brokers/<default>", {
        "ssl.keystore.password": JAVA_CBC,
    })})
    result = translate(snap, opts(secret=JAVA_SECRET))
    assert result.blockers == []
    assert of_type(result, "CONFIG_RECORD") == [
        {"resourceType": 4, "resourceName": "", "name": "ssl.keystore.password",
         "value": JAVA_PLAIN}
    ]


def test_wrong_secret_is_a_blocker_naming_the_config_not_the_secret() -> None:
    snap = ClusterSnapshot(broker_configs={"1": cfg("brokers/1", {
        "listener.name.sasl.plain.sasl.jaas.config": JAVA_CBC,
    })})
    result = translate(snap, opts(secret="not-the-secret"))
    [blocker] = result.blockers
    assert blocker.code == "BROKER_PASSWORD_UNDECODABLE"
    assert "listener.name.sasl.plain.sasl.jaas.config" in blocker.message
    assert "not-the-secret" not in blocker.message
    assert of_type(result, "CONFIG_RECORD") == []


def test_secret_stays_out_of_repr() -> None:
    assert "hunter2" not in repr(TranslationOptions(password_encoder_secret="hunter2"))


# --- client quotas and SCRAM -------------------------------------------------------------------


def test_quota_entities_order_desanitizing_and_default_null() -> None:
    """KAFKA-16222 (names left sanitized) and KAFKA-16411 (default entity written as "")."""
    quotas = of_type(translate(full_snapshot(), opts()), "CLIENT_QUOTA_RECORD")
    assert [(q["entity"], q["key"], q["value"]) for q in quotas] == [
        ([{"entityType": "user", "entityName": None}], "consumer_byte_rate", 2048.0),
        ([{"entityType": "user", "entityName": "alice@example.com"}], "producer_byte_rate",
         1024.0),
        ([{"entityType": "client-id", "entityName": "app-1"}], "request_percentage", 50.5),
        ([{"entityType": "user", "entityName": "bob"},
          {"entityType": "client-id", "entityName": None}], "producer_byte_rate", 9.0),
        ([{"entityType": "ip", "entityName": "10.0.0.1"}], "connection_creation_rate", 10.0),
    ]
    assert all(isinstance(q["value"], float) and q["remove"] is False for q in quotas)


@pytest.mark.parametrize("value", ["fast", "1_000", "", "0x10"])
def test_non_numeric_quota_names_the_path(value: str) -> None:
    znode = cfg("clients/app%2F1", {"producer_byte_rate": value})
    with pytest.raises(TranslationError, match=r"/config/clients/app%2F1.*producer_byte_rate"):
        quota_records(znode)


def test_java_double_forms_are_accepted() -> None:
    znode = cfg("ips/::1", {"a": " 1e3 ", "b": "2.5d", "c": "-0.5", "d": "7."})
    assert [r.data["value"] for r in quota_records(znode)] == [1000.0, 2.5, -0.5, 7.0]


def test_scram_credentials_become_scram_records_never_quotas() -> None:
    snap = ClusterSnapshot(user_configs={"alice%40example.com": cfg(
        "users/alice%40example.com",
        {"SCRAM-SHA-512": SCRAM_512, "SCRAM-SHA-256": SCRAM_256, "producer_byte_rate": "5"},
    )})
    result = translate(snap, opts("3.5-IV2"))
    assert result.blockers == []
    scram = of_type(result, "USER_SCRAM_CREDENTIAL_RECORD")
    assert scram == [
        {"name": "alice@example.com", "mechanism": 1, "salt": b"salty-salt",
         "storedKey": b"\x00stored\xff", "serverKey": b"\x01server\xfe", "iterations": 4096},
        {"name": "alice@example.com", "mechanism": 2, "salt": b"\x01server\xfe",
         "storedKey": b"salty-salt", "serverKey": b"\x00stored\xff", "iterations": 8192},
    ]
    quotas = of_type(result, "CLIENT_QUOTA_RECORD")
    assert [q["key"] for q in quotas] == ["producer_byte_rate"]
    types = [r.type for r in result.records]
    assert types.index("USER_SCRAM_CREDENTIAL_RECORD") < types.index("CLIENT_QUOTA_RECORD")


def test_scram_below_35_iv2_is_a_blocker() -> None:
    snap = ClusterSnapshot(user_configs={"carol": cfg("users/carol", {"SCRAM-SHA-256": SCRAM_256,
                                                                      "producer_byte_rate": "1"})})
    result = translate(snap, opts("3.5-IV1"))
    assert [(b.code, b.path) for b in result.blockers] == [
        ("SCRAM_NEEDS_NEWER_METADATA_VERSION", "/config/users/carol")
    ]
    assert of_type(result, "USER_SCRAM_CREDENTIAL_RECORD") == []
    assert [q["key"] for q in of_type(result, "CLIENT_QUOTA_RECORD")] == ["producer_byte_rate"]
    assert SALT not in repr(result.blockers)


def test_malformed_scram_names_path_without_the_secret() -> None:
    snap = ClusterSnapshot(user_configs={"dave": cfg("users/dave", {
        "SCRAM-SHA-256": f"salt={SALT},stored_key=***,server_key={SERVER},iterations=4096"})})
    with pytest.raises(TranslationError, match="/config/users/dave") as info:
        translate(snap, opts())
    assert SALT not in str(info.value) and SERVER not in str(info.value)


# --- producer ids ------------------------------------------------------------------------------


def test_producer_ids_record_is_the_next_block() -> None:
    """KAFKA-15552: Kafka 3.4.0-3.5.1/3.6.0 wrote block_start and re-issued live producer ids."""
    [record] = producer_id_records(ProducerIdBlock(1, 2, 5000, 5999, st()))
    assert record.data == {"brokerId": 2, "brokerEpoch": -1, "nextProducerId": 6000}
    assert record.data["nextProducerId"] != 5000
    assert record.data["nextProducerId"] == 5000 + 1000


def test_bad_producer_id_block_names_the_path() -> None:
    with pytest.raises(TranslationError, match="/latest_producer_id_block"):
        producer_id_records(ProducerIdBlock(1, 2, 5000, 4999, st()))


# --- ACLs ----------------------------------------------------------------------------------------


def test_acls_from_both_stores_with_kafka_codes_sorted() -> None:
    acls = of_type(translate(full_snapshot(), opts()), "ACCESS_CONTROL_ENTRY_RECORD")
    assert [{k: v for k, v in a.items() if k != "id"} for a in acls] == [
        {"resourceType": 2, "resourceName": "orders", "patternType": 3,
         "principal": "User:alice", "host": "*", "operation": 3, "permissionType": 3},
        {"resourceType": 2, "resourceName": "orders", "patternType": 3,
         "principal": "User:alice", "host": "10.0.0.9", "operation": 4, "permissionType": 2},
        {"resourceType": 2, "resourceName": "ord", "patternType": 4,
         "principal": "User:bob", "host": "*", "operation": 4, "permissionType": 3},
        {"resourceType": 4, "resourceName": "kafka-cluster", "patternType": 3,
         "principal": "User:admin", "host": "*", "operation": 2, "permissionType": 3},
    ]
    ids = [a["id"] for a in acls]
    assert len(set(ids)) == 4 and all(isinstance(i, str) and len(i) == 22 for i in ids)


@pytest.mark.parametrize(
    ("operation", "code"),
    [("Read", 3), ("Write", 4), ("Create", 5), ("Delete", 6), ("Alter", 7), ("Describe", 8),
     ("ClusterAction", 9), ("DescribeConfigs", 10), ("AlterConfigs", 11),
     ("IdempotentWrite", 12), ("CreateTokens", 13), ("DescribeTokens", 14), ("All", 2)],
)
def test_acl_operation_codes(operation: str, code: int) -> None:
    resource = AclResource("LITERAL", "TransactionalId", "tx",
                           (AclEntry("User:u", "Allow", operation, "*"),), st())
    [record] = acl_records(resource)
    assert record.data["operation"] == code
    assert record.data["resourceType"] == 5


@pytest.mark.parametrize(("rtype", "code"), [("Group", 3), ("DelegationToken", 6), ("User", 7)])
def test_acl_resource_type_codes(rtype: str, code: int) -> None:
    resource = AclResource("LITERAL", rtype, "x", (AclEntry("User:u", "Deny", "Read", "*"),), st())
    assert acl_records(resource)[0].data["resourceType"] == code


def test_acl_ids_are_content_derived_and_duplicates_collapse() -> None:
    entry = AclEntry("User:u", "Allow", "Read", "*")
    a = acl_records(AclResource("LITERAL", "Topic", "t", (entry, entry), st()))
    b = acl_records(AclResource("LITERAL", "Topic", "t", (entry,), st()))
    prefixed = acl_records(AclResource("PREFIXED", "Topic", "t", (entry,), st()))
    assert len(a) == 1
    assert a == b
    assert a[0].data["id"] != prefixed[0].data["id"]


def test_unknown_acl_operation_names_the_path() -> None:
    resource = AclResource("PREFIXED", "Topic", "t", (AclEntry("User:u", "Allow", "Fly", "*"),),
                           st())
    with pytest.raises(TranslationError, match="/kafka-acl-extended/prefixed/Topic/t.*Fly"):
        acl_records(resource)


# --- delegation tokens -------------------------------------------------------------------------


def test_delegation_tokens_desanitized_requester_defaults_to_owner() -> None:
    tokens = of_type(translate(full_snapshot(), opts("3.6-IV2")), "DELEGATION_TOKEN_RECORD")
    assert tokens == [{
        "owner": "User:alice",
        "requester": "User:alice",
        "renewers": ["User:bob"],
        "issueTimestamp": 10,
        "maxTimestamp": 20,
        "expirationTimestamp": 15,
        "tokenId": "tok1",
    }]


def test_delegation_tokens_below_36_iv2_are_blockers() -> None:
    result = translate(full_snapshot(), opts("3.6-IV1"))
    assert ("TOKENS_NEED_NEWER_METADATA_VERSION", "/delegation_token/tokens/tok1") in [
        (b.code, b.path) for b in result.blockers
    ]
    assert of_type(result, "DELEGATION_TOKEN_RECORD") == []


# --- whole-run properties ----------------------------------------------------------------------


def test_translation_is_deterministic_whatever_the_input_order() -> None:
    snap = full_snapshot()
    shuffled = ClusterSnapshot(
        **{
            name: (dict(reversed(list(value.items()))) if isinstance(value, dict) else
                   tuple(reversed(value)) if isinstance(value, tuple) else value)
            for name, value in ((f, getattr(snap, f)) for f in ClusterSnapshot.__dataclass_fields__)
        }
    )
    assert translate(snap, opts()).records == translate(shuffled, opts()).records
    assert pickle.loads(pickle.dumps(translate(snap, opts()).records)) == translate(
        snap, opts()).records


def test_counts_match_records() -> None:
    result = translate(full_snapshot(), opts())
    assert sum(result.counts.values()) == len(result.records)
    assert result.counts["PARTITION_RECORD"] == 4
    assert result.counts["REGISTER_BROKER_RECORD"] == 3
    assert result.counts["TOPIC_RECORD"] == 2


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.6-IV2", "3.7-IV2", "3.9-IV0"])
def test_every_record_fits_the_codec_schema(mv: str) -> None:
    """Each data key is a field of that record type at that version (writers.codec.schema)."""
    for record in translate(full_snapshot(), opts(mv)).records:
        spec = record_spec(record.type)
        assert record.version in spec.valid_versions, record
        for key in record.data:
            assert record.version in spec.field_named(key).versions, (record.type, key)


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV2", "3.7-IV2", "3.9-IV0"])
def test_every_record_encodes_and_decodes_back(mv: str) -> None:
    """The codec (writers) accepts every record and decodes it to the same field values."""
    for record in translate(full_snapshot(), opts(mv)).records:
        decoded = decode_record(encode_record(record))
        assert (decoded.type, decoded.version) == (record.type, record.version)
        for key, value in record.data.items():
            assert decoded.data[key] == value, (record.type, key)


def test_emit_functions_are_picklable_for_spark() -> None:
    for fn in (topic_records, broker_records, quota_records, acl_records, producer_id_records):
        assert pickle.loads(pickle.dumps(fn)) is fn


# --- round trip through verify's replay ---------------------------------------------------------


@pytest.mark.parametrize("mv", ["3.6-IV2", "3.9-IV0"])
def test_records_replay_to_the_image_zookeeper_implies(mv: str) -> None:
    """snapshot -> records -> replay (verify's loader) == verify's expected image of the snapshot.

    Two independent readings of Kafka's mapping (the translator, and verify's expected image)
    must agree field by field on every entity kind.
    """
    snap = full_snapshot()
    loaded = load_records(translate(snap, opts(mv)).records)
    assert loaded.open_transaction is None
    assert compare(expected_image(snap), loaded.image) == []


def test_garbage_collector_state_is_restored() -> None:
    """translate pauses the cyclic collector for speed and always puts it back."""
    import gc

    assert gc.isenabled()
    translate(full_snapshot(), opts())
    assert gc.isenabled()
    with pytest.raises(BadFlagError):
        translate(full_snapshot(), opts("nope"))
    assert gc.isenabled()
    gc.disable()
    try:
        translate(full_snapshot(), opts())
        assert not gc.isenabled()  # a caller's choice to keep it off is respected
    finally:
        gc.enable()
