"""Every znode decoder, every version: good data decodes to the model, bad data is refused
with the path and the problem (design I8). The malformed corpus is shared with the
integration test that writes it into a real ZooKeeper."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from migrate.cli.exit_codes import exit_code_for
from zkreader import ZnodeFormatError, ZnodeStat
from zkreader._znodes import (
    AclZnode,
    BrokerZnode,
    ClusterIdZnodeKind,
    ConfigZnodeKind,
    ControllerEpochZnodeKind,
    ControllerZnodeKind,
    FeatureZnodeKind,
    LogDirEventZnode,
    MigrationZnodeKind,
    PartitionStateZnode,
    ProducerIdBlockZnode,
    TokenZnode,
    TopicZnode,
    kind_for_path,
)

STAT = ZnodeStat(czxid=7, mzxid=9, version=3, ctime_ms=1, mtime_ms=2, ephemeral_owner=0)
CORPUS = json.loads(
    (Path(__file__).parents[2] / "integration" / "malformed" / "corpus.json").read_text()
)
UUID = "Xpp3Z_egYWE0W-6cpvtoGg"


def js(value: Any) -> bytes:
    return json.dumps(value).encode()


def corpus_data(entry: dict[str, str]) -> bytes:
    if "data_hex" in entry:
        return bytes.fromhex(entry["data_hex"])
    return entry["data"].encode()


# --- brokers ----------------------------------------------------------------------------------

def test_broker_v1_has_only_host_and_port() -> None:
    data = js({"version": 1, "host": "b1", "port": 9092, "jmx_port": -1})
    b = BrokerZnode(1).decode(data, STAT)
    assert [(e.listener, e.host, e.port, e.security_protocol) for e in b.endpoints] == [
        ("PLAINTEXT", "b1", 9092, "PLAINTEXT")]
    assert (b.json_version, b.rack, b.timestamp_ms, b.epoch) == (1, None, 0, 7)


def test_broker_v2_takes_protocol_from_listener_name() -> None:
    data = js({"version": 2, "host": "b", "port": 9092, "jmx_port": 9999,
               "timestamp": "1700000000000", "endpoints": ["PLAINTEXT://b:9092", "SSL://b:9093"]})
    b = BrokerZnode(2).decode(data, STAT)
    assert [e.security_protocol for e in b.endpoints] == ["PLAINTEXT", "SSL"]
    assert (b.jmx_port, b.timestamp_ms) == (9999, 1700000000000)


def test_broker_v2_listener_that_is_no_protocol_is_refused() -> None:
    data = js({"version": 2, "jmx_port": -1, "endpoints": ["INTERNAL://b:9092"]})
    with pytest.raises(ZnodeFormatError, match="no listener_security_protocol_map"):
        BrokerZnode(2).decode(data, STAT)


def test_broker_v3_rack_null_and_set() -> None:
    base = {"version": 3, "jmx_port": -1, "timestamp": "5", "endpoints": ["PLAINTEXT://b:1"]}
    assert BrokerZnode(3).decode(js({**base, "rack": None}), STAT).rack is None
    assert BrokerZnode(3).decode(js({**base, "rack": "r1"}), STAT).rack == "r1"
    with pytest.raises(ZnodeFormatError, match="'rack' is an integer"):
        BrokerZnode(3).decode(js({**base, "rack": 1}), STAT)


def test_broker_v4_protocol_map_and_ipv6_and_empty_host() -> None:
    data = js({"version": 4, "host": None, "port": -1, "jmx_port": -1, "timestamp": "1",
               "endpoints": ["INTERNAL://[::1]:9092", "EXTERNAL://:9093"],
               "listener_security_protocol_map": {"INTERNAL": "SASL_SSL",
                                                  "EXTERNAL": "SASL_PLAINTEXT"}})
    b = BrokerZnode(4).decode(data, STAT)
    assert [(e.listener, e.host, e.port, e.security_protocol) for e in b.endpoints] == [
        ("INTERNAL", "::1", 9092, "SASL_SSL"), ("EXTERNAL", "", 9093, "SASL_PLAINTEXT")]


def test_broker_v5_features() -> None:
    data = js({"version": 5, "jmx_port": -1, "timestamp": "1", "endpoints": ["PLAINTEXT://b:1"],
               "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
               "features": {"metadata.version": {"min_version": 1, "max_version": 21}}})
    assert BrokerZnode(5).decode(data, STAT).features == {"metadata.version": (1, 21)}
    bad = data.replace(b'"min_version": 1', b'"min_version": 30')
    with pytest.raises(ZnodeFormatError, match="min_version 30 > max_version 21"):
        BrokerZnode(5).decode(bad, STAT)


# --- controller, epoch, cluster id, feature -------------------------------------------------

def test_controller_v1_and_v2() -> None:
    v1 = ControllerZnodeKind().decode(js({"version": 1, "brokerid": 2, "timestamp": "9"}), STAT)
    assert (v1.broker_id, v1.json_version, v1.timestamp_ms, v1.kraft_controller_epoch) == (
        2, 1, 9, -1)
    v2 = ControllerZnodeKind().decode(js({"version": 2, "brokerid": 3000, "timestamp": "9",
                                          "kraftControllerEpoch": 4}), STAT)
    assert (v2.kraft_controller_epoch, v2.is_kraft) == (4, True)
    with pytest.raises(ZnodeFormatError, match="missing required field 'kraftControllerEpoch'"):
        ControllerZnodeKind().decode(js({"version": 2, "brokerid": 1, "timestamp": "9"}), STAT)


def test_controller_epoch_plain_text() -> None:
    assert ControllerEpochZnodeKind().decode(b"17", STAT).epoch == 17
    assert ControllerEpochZnodeKind().decode(b"0", STAT).epoch == 0
    for bad in (b"", b"1.5", b'{"epoch":1}', b"\xef\xbc\x91"):  # last: fullwidth digit one
        with pytest.raises(ZnodeFormatError) as info:
            ControllerEpochZnodeKind().decode(bad, STAT)
        assert info.value.path == "/controller_epoch"


def test_cluster_id_version_is_a_string() -> None:
    c = ClusterIdZnodeKind().decode(js({"version": "1", "id": UUID}), STAT)
    assert c.cluster_id == UUID


def test_feature_v1_and_v2() -> None:
    v1 = FeatureZnodeKind().decode(js({"version": 1, "status": 1, "features": {
        "metadata.version": {"min_version_level": 1, "max_version_level": 7}}}), STAT)
    assert (v1.json_version, v1.status, v1.features) == (1, 1, {"metadata.version": (1, 7)})
    v2 = FeatureZnodeKind().decode(js({"version": 2, "status": 0, "features": {
        "metadata.version": {"max_version_level": 21}}}), STAT)
    assert v2.features == {"metadata.version": (None, 21)}
    with pytest.raises(ZnodeFormatError, match="min_version_level 8 > max 7"):
        FeatureZnodeKind().decode(js({"version": 1, "status": 1, "features": {
            "f": {"min_version_level": 8, "max_version_level": 7}}}), STAT)


# --- topics and partition states -------------------------------------------------------------

def test_topic_v1_v2_v3() -> None:
    v1 = TopicZnode("a").decode(js({"version": 1, "partitions": {"0": [1, 2], "1": [2, 3]}}),
                                STAT)
    assert (v1.assignment, v1.topic_id, v1.adding_replicas) == ({0: (1, 2), 1: (2, 3)}, None, {})
    v2 = TopicZnode("a").decode(js({"version": 2, "partitions": {"0": [1, 2, 3]},
                                    "adding_replicas": {"0": [3]},
                                    "removing_replicas": {"0": [1]}}), STAT)
    assert (v2.adding_replicas, v2.removing_replicas) == ({0: (3,)}, {0: (1,)})
    v3 = TopicZnode("a").decode(js({"version": 3, "partitions": {"0": [1]}, "adding_replicas": {},
                                    "removing_replicas": {}, "topic_id": UUID}), STAT)
    assert (v3.json_version, v3.topic_id, v3.stat) == (3, UUID, STAT)


def test_topic_with_no_replicas_for_a_partition_is_refused() -> None:
    with pytest.raises(ZnodeFormatError, match="assigns partition 0 to no replica"):
        TopicZnode("a").decode(js({"version": 3, "partitions": {"0": []}}), STAT)


@pytest.mark.parametrize(("partitions", "problem"), [
    ({"0": [1], "05": [2], "5": [3]},
     "has partition keys '05' and '5', which both name partition 5"),
    ({"+1": [1]}, "has partition key '+1', expected a partition id >= 0"),
    ({"\u0663": [1]}, "has partition key '\u0663', expected a partition id >= 0"),  # Arabic 3
    ({"2147483648": [1]}, "has partition key '2147483648', past the largest partition id"),
    ({"0": [1, 1]}, "field 'partitions.0' lists a broker id twice: [1, 1]"),
    ({"0": [1, True]}, "holds a boolean, expected integers"),
])
def test_partition_keys_and_replicas_off_the_common_shape_get_the_full_checks(
        partitions: dict[str, Any], problem: str) -> None:
    """The decoder's one-pass path for canonical maps must hand everything else to the checks
    that name the problem (these would otherwise decode silently or wrongly)."""
    with pytest.raises(ZnodeFormatError) as err:
        TopicZnode("a").decode(js({"version": 3, "partitions": partitions}), STAT)
    assert problem in str(err.value)


def test_canonical_partition_keys_decode_in_order() -> None:
    got = TopicZnode("a").decode(js({"version": 3, "partitions": {
        "10": [3, 1], "0": [1, 2], "999999999": [2]}}), STAT)
    assert list(got.assignment.items()) == [(10, (3, 1)), (0, (1, 2)), (999999999, (2,))]


def test_partition_state_epoch_is_znode_version() -> None:
    s = PartitionStateZnode("t", 4).decode(js({"version": 1, "leader": -1, "leader_epoch": 5,
                                               "controller_epoch": 2, "isr": [],
                                               "leader_recovery_state": 1}), STAT)
    assert (s.topic, s.partition, s.leader, s.isr, s.leader_recovery_state) == (
        "t", 4, -1, (), 1)
    assert s.partition_epoch == 3
    plain = PartitionStateZnode("t", 0).decode(js({"version": 1, "leader": 1, "leader_epoch": 0,
                                                   "controller_epoch": 1, "isr": [1]}), STAT)
    assert plain.leader_recovery_state == 0


# --- configs, ACLs, tokens, producer ids, log dir events, migration ------------------------

def test_config_values_and_empty_parent() -> None:
    c = ConfigZnodeKind("users/alice%40example.com").decode(
        js({"version": 1, "config": {"producer_byte_rate": "1024"}}), STAT)
    assert (c.entity_path, c.config) == ("users/alice%40example.com",
                                         {"producer_byte_rate": "1024"})
    empty = ConfigZnodeKind("users/bob").decode(b"", STAT)
    assert empty.config == {}


def test_config_error_never_quotes_the_value() -> None:
    secret = "salt=c2VjcmV0,stored_key=AAAA,server_key=BBBB,iterations=4096"
    data = js({"version": 1, "config": {"SCRAM-SHA-256": secret, "x": 1}})
    with pytest.raises(ZnodeFormatError) as info:
        ConfigZnodeKind("users/u").decode(data, STAT)
    assert "c2VjcmV0" not in str(info.value)


def test_acl_literal_and_prefixed() -> None:
    data = js({"version": 1, "acls": [
        {"principal": "User:alice", "permissionType": "Allow", "operation": "Read", "host": "*"},
        {"principal": "User:bob", "permissionType": "Deny", "operation": "IdempotentWrite",
         "host": "10.0.0.1"}]})
    lit = AclZnode("LITERAL", "Topic", "orders").decode(data, STAT)
    assert lit.acls[1].operation == "IdempotentWrite" and lit.pattern_type == "LITERAL"
    pre = AclZnode("PREFIXED", "Group", "app-")
    assert pre.path == "/kafka-acl-extended/prefixed/Group/app-"
    assert pre.decode(data, STAT).acls[0].principal == "User:alice"
    with pytest.raises(ZnodeFormatError, match="unknown ACL resource type 'Broker'"):
        AclZnode("LITERAL", "Broker", "x").decode(data, STAT)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_token_versions(version: int) -> None:
    body: dict[str, Any] = {"version": version, "owner": "User%3Aalice", "renewers": ["User%3Ab"],
                            "issueTimestamp": 1, "maxTimestamp": 3, "expiryTimestamp": 2,
                            "tokenId": "tok1"}
    if version == 3:
        body["tokenRequester"] = "User%3Aalice"
    t = TokenZnode("tok1").decode(js(body), STAT)
    assert (t.json_version, t.owner, t.renewers) == (version, "User%3Aalice", ("User%3Ab",))
    assert t.requester == ("User%3Aalice" if version == 3 else None)


def test_producer_id_block_strings_and_kraft_broker() -> None:
    p = ProducerIdBlockZnode().decode(js({"version": 1, "broker": -1, "block_start": "1000",
                                          "block_end": "1999"}), STAT)
    assert (p.broker_id, p.block_start, p.block_end) == (-1, 1000, 1999)


def test_log_dir_event_and_migration() -> None:
    e = LogDirEventZnode("log_dir_event_0000000003").decode(
        js({"version": 1, "broker": 2, "event": 1}), STAT)
    assert (e.broker_id, e.event, e.name) == (2, 1, "log_dir_event_0000000003")
    m = MigrationZnodeKind().decode(js({"version": 0, "kraft_controller_id": -1,
                                        "kraft_controller_epoch": -1, "kraft_metadata_offset": -1,
                                        "kraft_metadata_epoch": -1}), STAT)
    assert m.kraft_metadata_offset == -1


# --- paths and the malformed corpus ---------------------------------------------------------

@pytest.mark.parametrize(("path", "kind"), [
    ("/brokers/ids/3", BrokerZnode(3)),
    ("/brokers/topics/t", TopicZnode("t")),
    ("/brokers/topics/t/partitions/2/state", PartitionStateZnode("t", 2)),
    ("/config/users/a%40b/clients/c", ConfigZnodeKind("users/a%40b/clients/c")),
    ("/config/brokers/<default>", ConfigZnodeKind("brokers/<default>")),
    ("/kafka-acl-extended/prefixed/Topic/x", AclZnode("PREFIXED", "Topic", "x")),
    ("/migration", MigrationZnodeKind()),
    ("/brokers/topics/t/partitions", None),
    ("/config/changes/config_change_0000000001", None),
])
def test_kind_for_path_round_trips(path: str, kind: object) -> None:
    found = kind_for_path(path)
    assert found == kind
    if found is not None:
        assert found.path == path


def test_corpus_is_big_and_covers_every_kind() -> None:
    assert len(CORPUS) >= 20
    kinds = {type(kind_for_path(e["path"])).__name__ for e in CORPUS}
    assert len(kinds) == 13


@pytest.mark.parametrize("entry", CORPUS, ids=[e["name"] for e in CORPUS])
def test_malformed_corpus_is_refused_with_path_and_problem(entry: dict[str, str]) -> None:
    kind = kind_for_path(entry["path"])
    assert kind is not None
    with pytest.raises(ZnodeFormatError) as info:
        kind.decode(corpus_data(entry), STAT)
    assert info.value.path == entry["path"]
    assert entry["problem"] in info.value.problem
    assert exit_code_for(info.value) == 2
    assert str(info.value).startswith(entry["path"] + ": ")


@pytest.mark.parametrize("body", [
    {"version": 1, "leader": 3, "leader_epoch": 9, "controller_epoch": 2, "isr": [3, 1]},
    {"version": 1, "leader": -1, "leader_epoch": 0, "controller_epoch": 0, "isr": [],
     "leader_recovery_state": 1, "unknown_future_key": "ignored"},
])
def test_state_fast_path_agrees_with_the_strict_decoder(body: dict[str, Any]) -> None:
    kind = PartitionStateZnode("t", 1)
    assert kind.decode(js(body), STAT) == kind._decode_strict(js(body), STAT)


@pytest.mark.parametrize(("name", "legal"), [
    ("a" * 249, True), ("orders.v2_EU-west", True), ("__consumer_offsets", True),
    ("", False), (".", False), ("..", False), ("a" * 250, False), ("a b", False),
    ("caf\u00e9", False), ("a:b*c", False), ("a/b", False),
])
def test_topic_names_follow_kafkas_topic_validate(name: str, legal: bool) -> None:
    from zkreader._znodes import topic_name_problem

    assert (topic_name_problem(name) is None) == legal
    if not legal:
        with pytest.raises(ZnodeFormatError):
            TopicZnode(name).decode(js({"version": 1, "partitions": {"0": [1]}}), STAT)
