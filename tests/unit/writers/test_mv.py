"""metadata.version: the level table, parsing, feature gates and record-version selectors."""

from __future__ import annotations

import pytest

from migrate.cli.exit_codes import exit_code_for
from writers import (
    LATEST_PRODUCTION,
    METADATA_VERSIONS,
    MINIMUM_BOOTSTRAP_VERSION,
    MINIMUM_KRAFT_VERSION,
    SchemaError,
    metadata_version_for_level,
    parse_metadata_version,
    record_version,
)


def test_levels_are_contiguous_and_named_as_kafka_does() -> None:
    assert [mv.feature_level for mv in METADATA_VERSIONS] == list(range(1, 34))
    assert METADATA_VERSIONS[0].name == "3.0-IV1"
    assert {mv.name: mv.level for mv in METADATA_VERSIONS} == {
        "3.0-IV1": 1, "3.1-IV0": 2, "3.2-IV0": 3, "3.3-IV0": 4, "3.3-IV1": 5, "3.3-IV2": 6,
        "3.3-IV3": 7, "3.4-IV0": 8, "3.5-IV0": 9, "3.5-IV1": 10, "3.5-IV2": 11, "3.6-IV0": 12,
        "3.6-IV1": 13, "3.6-IV2": 14, "3.7-IV0": 15, "3.7-IV1": 16, "3.7-IV2": 17,
        "3.7-IV3": 18, "3.7-IV4": 19, "3.8-IV0": 20, "3.9-IV0": 21, "4.0-IV0": 22,
        "4.0-IV1": 23, "4.0-IV2": 24, "4.0-IV3": 25, "4.1-IV0": 26, "4.1-IV1": 27,
        # Kafka 4.4.0's MetadataVersion enum (kafka-server-common-4.4.0.jar)
        "4.2-IV0": 28, "4.2-IV1": 29, "4.3-IV0": 30, "4.4-IV0": 31, "4.4-IV1": 32,
        "4.4-IV2": 33,
    }
    assert (MINIMUM_KRAFT_VERSION.level, MINIMUM_BOOTSTRAP_VERSION.level,
            LATEST_PRODUCTION.name) == (1, 4, "3.9-IV0")
    assert not METADATA_VERSIONS[-1].production and LATEST_PRODUCTION.production


def test_ordering_follows_feature_level() -> None:
    assert parse_metadata_version("3.4-IV0") < parse_metadata_version("3.6-IV1")
    assert sorted(METADATA_VERSIONS, reverse=True)[0].name == "4.4-IV2"


@pytest.mark.parametrize(("text", "name"), [
    ("3.9-IV0", "3.9-IV0"), (" 3.6-IV1 ", "3.6-IV1"), ("3.7", "3.7-IV4"), ("3.3", "3.3-IV3"),
    ("3.9", "3.9-IV0"),
])
def test_parse(text: str, name: str) -> None:
    assert parse_metadata_version(text).name == name


@pytest.mark.parametrize("bad", ["", "3.9-IV1", "2.8-IV1", "latest", "4.0-IV0", "4.0"])
def test_parse_rejects_with_the_valid_names(bad: str) -> None:
    with pytest.raises(SchemaError) as info:
        parse_metadata_version(bad)
    assert "3.0-IV1" in str(info.value) and "3.9-IV0" in str(info.value)
    assert "4.0-IV0" not in str(info.value).split("valid:")[1]
    assert exit_code_for(info.value) == 2


def test_unstable_only_when_allowed() -> None:
    assert parse_metadata_version("4.0-IV0", allow_unstable=True).level == 22


def test_level_lookup() -> None:
    assert metadata_version_for_level(21).name == "3.9-IV0"
    with pytest.raises(SchemaError, match="feature level 99"):
        metadata_version_for_level(99)


@pytest.mark.parametrize(("gate", "first"), [
    ("supports_migration", "3.4-IV0"), ("supports_scram", "3.5-IV2"),
    ("supports_transactions", "3.6-IV1"), ("supports_delegation_tokens", "3.6-IV2"),
    ("supports_directories", "3.7-IV2"), ("supports_elr", "4.0-IV1"),
])
def test_feature_gates_switch_on_at_their_level(gate: str, first: str) -> None:
    level = parse_metadata_version(first, allow_unstable=True).level
    for mv in METADATA_VERSIONS:
        assert getattr(mv, gate) is (mv.level >= level), (gate, mv.name)


@pytest.mark.parametrize(("mv", "expected"), [
    ("3.3-IV2", {"REGISTER_BROKER_RECORD": 0, "PARTITION_RECORD": 0,
                 "BROKER_REGISTRATION_CHANGE_RECORD": 0}),
    ("3.3-IV3", {"REGISTER_BROKER_RECORD": 1, "BROKER_REGISTRATION_CHANGE_RECORD": 1}),
    ("3.4-IV0", {"REGISTER_BROKER_RECORD": 2, "PARTITION_RECORD": 0,
                 "PARTITION_CHANGE_RECORD": 0, "ZK_MIGRATION_STATE_RECORD": 0}),
    ("3.6-IV1", {"REGISTER_BROKER_RECORD": 2, "BEGIN_TRANSACTION_RECORD": 0}),
    ("3.7-IV2", {"REGISTER_BROKER_RECORD": 3, "PARTITION_RECORD": 1,
                 "PARTITION_CHANGE_RECORD": 1, "BROKER_REGISTRATION_CHANGE_RECORD": 2}),
    ("3.9-IV0", {"REGISTER_BROKER_RECORD": 3, "PARTITION_RECORD": 1, "TOPIC_RECORD": 0,
                 "FEATURE_LEVEL_RECORD": 0, "REGISTER_CONTROLLER_RECORD": 0}),
    ("4.0-IV0", {"PARTITION_RECORD": 1, "PARTITION_CHANGE_RECORD": 1}),
    ("4.0-IV1", {"PARTITION_RECORD": 2, "PARTITION_CHANGE_RECORD": 2}),
    ("4.1-IV1", {"REGISTER_BROKER_RECORD": 3, "PARTITION_RECORD": 2}),
    # Kafka 4.4.0: registerBrokerRecordVersion 4 from 4.3-IV0 (cordoned log dirs), partition
    # records stay at 2
    ("4.2-IV1", {"REGISTER_BROKER_RECORD": 3, "PARTITION_RECORD": 2,
                 "BROKER_REGISTRATION_CHANGE_RECORD": 2}),
    ("4.3-IV0", {"REGISTER_BROKER_RECORD": 4, "PARTITION_RECORD": 2,
                 "PARTITION_CHANGE_RECORD": 2, "BROKER_REGISTRATION_CHANGE_RECORD": 3}),
    ("4.4-IV2", {"REGISTER_BROKER_RECORD": 4, "PARTITION_RECORD": 2}),
])
def test_record_version_selectors(mv: str, expected: dict[str, int]) -> None:
    version = parse_metadata_version(mv, allow_unstable=True)
    assert {t: record_version(t, version) for t in expected} == expected


@pytest.mark.parametrize(("type_name", "mv"), [
    ("ZK_MIGRATION_STATE_RECORD", "3.3-IV3"), ("USER_SCRAM_CREDENTIAL_RECORD", "3.5-IV1"),
    ("BEGIN_TRANSACTION_RECORD", "3.6-IV0"), ("END_TRANSACTION_RECORD", "3.5-IV2"),
    ("DELEGATION_TOKEN_RECORD", "3.6-IV1"), ("REGISTER_CONTROLLER_RECORD", "3.6-IV2"),
    ("NO_OP_RECORD", "3.3-IV0"),
])
def test_records_a_level_cannot_carry(type_name: str, mv: str) -> None:
    with pytest.raises(SchemaError, match=f"{type_name} needs metadata.version"):
        record_version(type_name, parse_metadata_version(mv))


def test_unknown_record_type() -> None:
    with pytest.raises(SchemaError, match="unknown record type"):
        record_version("NOPE", LATEST_PRODUCTION)
