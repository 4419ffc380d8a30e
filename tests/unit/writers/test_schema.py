"""The schema table: coverage of Kafka 3.9's records, naming, defaults and import-time checks."""

from __future__ import annotations

import pytest

from writers import CONTROL_RECORDS, METADATA_RECORDS, RecordSpec, Versions, record_spec
from writers.codec.fields import _check_struct, _f, _snake_upper
from writers.codec.schema import _index, spec_for_type


def test_api_keys_are_those_of_kafka_3_9() -> None:
    assert sorted(METADATA_RECORDS) == [k for k in range(28) if k not in (6, 13, 16)]
    assert sorted(CONTROL_RECORDS) == [2, 3, 4, 5, 6]


@pytest.mark.parametrize(("api_key", "type_name"), [
    (0, "REGISTER_BROKER_RECORD"), (3, "PARTITION_RECORD"), (12, "FEATURE_LEVEL_RECORD"),
    (17, "BROKER_REGISTRATION_CHANGE_RECORD"), (20, "NO_OP_RECORD"),
    (21, "ZK_MIGRATION_STATE_RECORD"), (22, "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"),
    (27, "REGISTER_CONTROLLER_RECORD"),
])
def test_type_names_follow_kafkas_generator(api_key: int, type_name: str) -> None:
    assert METADATA_RECORDS[api_key].type_name == type_name
    assert record_spec(type_name) is METADATA_RECORDS[api_key]


def test_snake_case_like_message_generator() -> None:
    assert _snake_upper("ZkMigrationStateRecord") == "ZK_MIGRATION_STATE_RECORD"
    assert _snake_upper("KRaftVersionRecord") == "KRAFT_VERSION_RECORD"  # no "_" after a capital


def test_control_type_names() -> None:
    assert [CONTROL_RECORDS[i].type_name for i in range(2, 7)] == [
        "LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS"]
    assert [f.json_name for f in CONTROL_RECORDS[3].fields] == [
        "version", "lastContainedLogTimestamp"]
    assert [f.json_name for f in CONTROL_RECORDS[2].fields] == [
        "version", "leaderId", "voters", "grantingVoters"]


def test_json_names_are_lower_case_first() -> None:
    names = [f.json_name for f in METADATA_RECORDS[0].fields]
    assert names == ["brokerId", "isMigratingZkBroker", "incarnationId", "brokerEpoch",
                     "endPoints", "features", "rack", "fenced", "inControlledShutdown", "logDirs"]
    partition = [f.json_name for f in METADATA_RECORDS[3].fields]
    assert "leaderRecoveryState" in partition and "eligibleLeaderReplicas" in partition
    assert "lastKnownElr" in partition
    assert CONTROL_RECORDS[5].fields[1].json_name == "kRaftVersion"


def test_valid_versions() -> None:
    highest = {s.type_name: s.valid_versions.high for s in METADATA_RECORDS.values()}
    assert highest["REGISTER_BROKER_RECORD"] == 3
    assert highest["PARTITION_RECORD"] == highest["PARTITION_CHANGE_RECORD"] == 2
    assert highest["BROKER_REGISTRATION_CHANGE_RECORD"] == 2
    assert {t for t, h in highest.items() if h} == {
        "REGISTER_BROKER_RECORD", "PARTITION_RECORD", "PARTITION_CHANGE_RECORD",
        "BROKER_REGISTRATION_CHANGE_RECORD"}


def test_defaults() -> None:
    partition = METADATA_RECORDS[3]
    assert partition.field_named("partitionId").default_value() == -1
    assert partition.field_named("leaderRecoveryState").default_value() == 0
    assert partition.field_named("eligibleLeaderReplicas").default_value() is None
    assert partition.field_named("replicas").default_value() == []
    assert partition.field_named("topicId").default_value() == "AAAAAAAAAAAAAAAAAAAAAA"
    assert METADATA_RECORDS[5].field_named("leader").default_value() == -2
    broker = METADATA_RECORDS[0]
    assert broker.field_named("fenced").default_value() is True
    assert broker.field_named("rack").default_value() == ""
    assert METADATA_RECORDS[14].field_named("value").default_value() == 0.0


def test_is_default() -> None:
    partition = METADATA_RECORDS[3]
    elr = partition.field_named("eligibleLeaderReplicas")
    assert elr.is_default(None) and not elr.is_default([])
    replicas = partition.field_named("replicas")
    assert replicas.is_default([]) and replicas.is_default(()) and not replicas.is_default(None)
    assert not partition.field_named("leaderRecoveryState").is_default(1)


@pytest.mark.parametrize(("text", "low", "high", "shown"), [
    ("0+", 0, 0x7FFF, "0+"), ("1-2", 1, 2, "1-2"), ("3", 3, 3, "3"), ("none", 1, 0, "none"),
])
def test_versions_parse(text: str, low: int, high: int, shown: str) -> None:
    v = Versions.parse(text)
    assert (v.low, v.high, str(v)) == (low, high, shown)
    assert (low in v) is (low <= high)


def test_duplicate_api_key_is_rejected_naming_both() -> None:
    a = RecordSpec("ARecord", 30, Versions(0, 0), ())
    b = RecordSpec("BRecord", 30, Versions(0, 0), ())
    with pytest.raises(RuntimeError, match="Original claimant: ARecord. New claimant: BRecord"):
        _index([a, b], "metadata record")


def test_table_mistakes_are_rejected() -> None:
    with pytest.raises(RuntimeError, match="tag 0 claimed by both A and B"):
        _check_struct("X", (_f("A", "int8", tagged="0+", tag=0),
                            _f("B", "int8", tagged="0+", tag=0)))
    with pytest.raises(RuntimeError, match="tag and taggedVersions"):
        _check_struct("X", (_f("A", "int8", tag=0),))
    with pytest.raises(RuntimeError, match="duplicate field"):
        _check_struct("X", (_f("A", "int8"), _f("A", "int16")))
    with pytest.raises(RuntimeError, match="has no fields"):
        _check_struct("X", (_f("A", "[]Thing"),))


def test_lookup_by_type_name() -> None:
    assert spec_for_type("SNAPSHOT_FOOTER") is CONTROL_RECORDS[4]
    assert spec_for_type("NOPE") is None
    with pytest.raises(KeyError, match="known: ABORT_TRANSACTION_RECORD"):
        record_spec("NOPE")
