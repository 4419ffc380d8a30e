"""Kafka's facts live once (issue 8): one table of codes, one desanitizer, one secrets rule.

The codes are Kafka's own enum values (ResourceType, PatternType, AclOperation,
AclPermissionType, SecurityProtocol, ScramMechanism), written out here by hand.
"""

from __future__ import annotations

import logging

import pytest

import verify
from migrate import TranslationError, translate
from migrate.cli.record_samples import redact_record
from migrate.cli.snapshot import redact_config
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


# (record type, its data as a record holds it, the same as `inspect` sees it in JSON form, the
# fields that must print as REDACTED). Written by hand from what is secret: SCRAM salts and keys
# (and a salted password), every token field but its id (an HMAC included), sensitive config
# values; nothing else.
_SECRET_CASES = [
    ("USER_SCRAM_CREDENTIAL_RECORD",
     {"name": "alice", "mechanism": 1, "salt": b"S", "storedKey": b"K", "serverKey": b"V",
      "iterations": 4096, "saltedPassword": b"P"},
     {"name": "alice", "mechanism": 1, "salt": "Uw==", "storedKey": "Sw==", "serverKey": "Vg==",
      "iterations": 4096, "saltedPassword": "UA=="},
     {"salt", "storedKey", "serverKey", "saltedPassword"}),
    ("DELEGATION_TOKEN_RECORD",
     {"owner": "User:alice", "requester": "User:alice", "renewers": ["User:bob"],
      "issueTimestamp": 1, "maxTimestamp": 2, "expirationTimestamp": 3, "tokenId": "tok",
      "hmac": b"H"},
     {"owner": "User:alice", "requester": "User:alice", "renewers": ["User:bob"],
      "issueTimestamp": 1, "maxTimestamp": 2, "expirationTimestamp": 3, "tokenId": "tok",
      "hmac": "SA=="},
     {"owner", "requester", "renewers", "issueTimestamp", "maxTimestamp", "expirationTimestamp",
      "hmac"}),
    ("CONFIG_RECORD",
     {"resourceType": 4, "resourceName": "1", "name": "sasl.jaas.config",
      "value": 'PlainLoginModule required password="pw";'},
     {"resourceType": 4, "resourceName": "1", "name": "sasl.jaas.config",
      "value": 'PlainLoginModule required password="pw";'},
     {"value"}),
    ("CONFIG_RECORD",
     {"resourceType": 4, "resourceName": "", "name": "listener.name.internal.ssl.key.password",
      "value": "pw"},
     {"resourceType": 4, "resourceName": "", "name": "listener.name.internal.ssl.key.password",
      "value": "pw"},
     {"value"}),
    ("CONFIG_RECORD",
     {"resourceType": 2, "resourceName": "t", "name": "retention.ms", "value": "1000"},
     {"resourceType": 2, "resourceName": "t", "name": "retention.ms", "value": "1000"},
     set()),
    ("TOPIC_RECORD", {"name": "secret.password.topic", "topicId": b"\x00" * 16},
     {"name": "secret.password.topic", "topicId": "AAAAAAAAAAAAAAAAAAAAAA"}, set()),
]


@pytest.mark.parametrize(("kind", "data", "json_data", "secret"), _SECRET_CASES,
                         ids=[f"{c[0]}:{c[1].get('name', '')}" for c in _SECRET_CASES])
def test_plan_samples_and_inspect_redact_the_same_fields(
    kind: str, data: dict, json_data: dict, secret: set[str]
) -> None:
    sample = redact_record(MetadataRecord(kind, 0, data))
    shown = redact_record_json({"type": kind, "version": 0, "data": json_data},
                               RedactionPolicy.STRICT)["data"]
    assert {k for k, v in sample.items() if v == REDACTED} == secret
    assert {k for k, v in shown.items() if v == REDACTED} == secret
    for k in set(data) - secret:  # the rest is shown: samples as hex, inspect as Kafka's JSON
        assert sample[k] == (data[k].hex() if isinstance(data[k], bytes) else data[k])
        assert shown[k] == json_data[k]


def test_a_null_sensitive_config_value_stays_null_in_both_printers() -> None:
    # A ConfigRecord with a null value removes the config: nothing secret to hide, and hiding it
    # would make a removal look like a value.
    data = {"resourceType": 4, "resourceName": "1", "name": "sasl.jaas.config", "value": None}
    assert redact_record(MetadataRecord("CONFIG_RECORD", 0, data))["value"] is None
    obj = {"type": "CONFIG_RECORD", "version": 0, "data": dict(data)}
    assert redact_record_json(obj, RedactionPolicy.STRICT)["data"]["value"] is None
