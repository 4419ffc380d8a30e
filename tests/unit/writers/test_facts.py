"""Kafka's facts live once (issue 8): one table of codes, one desanitizer, one secrets rule.

The codes are Kafka's own enum values (ResourceType, PatternType, AclOperation,
AclPermissionType, SecurityProtocol, ScramMechanism), written out here by hand.
"""

from __future__ import annotations

import logging

import pytest

import verify
from migrate import TranslationError, translate
from migrate._record_samples import redact_record
from migrate._snapshot_json import redact_config
from verify import RedactionPolicy, expected_image, image_rows, redact_record_json
from writers import (
    ACL_OPERATIONS,
    ACL_PATTERN_TYPES,
    ACL_PERMISSIONS,
    ACL_RESOURCE_TYPES,
    REDACTED,
    SCRAM_MECHANISMS,
    SECURITY_PROTOCOLS,
    MetadataRecord,
    desanitize,
    is_sensitive_config,
    kafka_code,
    kafka_name,
)
from zkreader import ClusterSnapshot, ConfigZnode, ZnodeStat


def test_codes_are_kafkas() -> None:
    assert kafka_code(ACL_RESOURCE_TYPES, "TransactionalId") == 5
    assert kafka_code(ACL_RESOURCE_TYPES, "DELEGATION_TOKEN") == 6
    assert kafka_code(ACL_PATTERN_TYPES, "Prefixed") == 4
    assert kafka_code(ACL_OPERATIONS, "IdempotentWrite") == 12
    assert kafka_code(ACL_OPERATIONS, "describe_tokens") == 14
    assert kafka_code(ACL_PERMISSIONS, "Allow") == 3
    assert kafka_code(ACL_OPERATIONS, "Fly") is None
    assert SECURITY_PROTOCOLS["SASL_SSL"] == 3
    assert SCRAM_MECHANISMS == {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
    assert kafka_name(ACL_OPERATIONS, 9) == "CLUSTER_ACTION"
    assert kafka_name(ACL_OPERATIONS, 99) is None


def _stat() -> ZnodeStat:
    return ZnodeStat(czxid=1, mzxid=1, version=0, ctime_ms=1, mtime_ms=1)


def test_a_malformed_escape_is_kafkas_error_in_translate_and_verify_alike(
        caplog: pytest.LogCaptureFixture) -> None:
    # Java's URLDecoder throws on "%zz"; Python's unquote_plus would pass it through.
    with pytest.raises(ValueError):
        desanitize("bad%zzname")
    snap = ClusterSnapshot(client_configs={
        "bad%zzname": ConfigZnode("clients/bad%zzname", {"producer_byte_rate": "1"}, _stat()),
        "good%40x": ConfigZnode("clients/good%40x", {"producer_byte_rate": "2"}, _stat()),
    })
    with pytest.raises(TranslationError, match="/config/clients/bad%zzname"):
        translate(snap, _opts())
    with caplog.at_level(logging.WARNING):
        rows = image_rows(expected_image(snap), "client_quota")
    assert rows == {"client-id=good@x": {"producer_byte_rate": 2.0}}  # never "bad%zzname"
    assert "bad%zzname" in caplog.text


def _opts():  # noqa: ANN202 - the options type is migrate's
    from migrate import TranslationOptions

    return TranslationOptions()


@pytest.mark.parametrize(("key", "value"), [
    ("custom.credential", "plain"),           # verify used to print it, snapshot hid it
    ("some.key", "encryptedPassword:abc,passwordLength:3"),  # ditto, by value
    ("listener.name.x.ssl.keystore.password", "p"),
    ("SCRAM-SHA-512", "salt=..."),
    ("sasl.jaas.config", "x"),
])
def test_one_secrets_rule_and_one_marker_for_every_printer(key: str, value: str) -> None:
    assert is_sensitive_config(key, value)
    assert verify.is_sensitive_config is is_sensitive_config
    assert REDACTED == "<redacted>"
    # snapshot dump
    assert redact_config({key: value}) == {key: REDACTED}
    # plan's record samples and inspect's JSON lines
    record = MetadataRecord("CONFIG_RECORD", 0, {"resourceType": 4, "resourceName": "1",
                                                 "name": key, "value": value})
    assert redact_record(record)["value"] == REDACTED
    obj = {"type": "CONFIG_RECORD", "version": 0, "data": dict(record.data)}
    assert redact_record_json(obj, RedactionPolicy.STRICT)["data"]["value"] == REDACTED
    # parity rows (what verify's report prints)
    snap = ClusterSnapshot(broker_configs={"1": ConfigZnode("brokers/1", {key: value}, _stat())})
    assert image_rows(expected_image(snap), "broker_config") == {"1": {key: "<present>"}}


def test_innocent_configs_are_shown() -> None:
    assert not is_sensitive_config("retention.ms", "1000")
    assert redact_config({"retention.ms": "1000"}) == {"retention.ms": "1000"}


def test_zookeepers_spellings_name_exactly_kafkas_codes() -> None:
    # zkreader validates what ZooKeeper stores (PascalCase names) at the boundary (I8) and may
    # not import writers; this keeps its name sets and writers' code tables one fact.
    from zkreader import _paths, _znodes

    def norm(names: object) -> set[str]:
        return {str(n).replace("_", "").lower() for n in names}  # type: ignore[attr-defined]

    assert norm(_znodes.ACL_OPERATIONS) == norm(ACL_OPERATIONS)
    assert norm(_znodes.ACL_PERMISSIONS) == norm(ACL_PERMISSIONS)
    assert norm(_paths.ACL_RESOURCE_TYPES) == norm(ACL_RESOURCE_TYPES)
    assert norm(_znodes.ACL_PATTERNS.values()) | {"literal"} == norm(ACL_PATTERN_TYPES)
    assert set(_znodes.SECURITY_PROTOCOLS) == set(SECURITY_PROTOCOLS)
