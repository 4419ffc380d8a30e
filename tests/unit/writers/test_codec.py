"""The schema-driven codec: round trips over every record type and version, JSON form, errors."""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from typing import Any

import pytest

from writers import (
    CONTROL_RECORDS,
    METADATA_RECORDS,
    ControlRecord,
    FieldSpec,
    MetadataRecord,
    RecordDecodeError,
    SchemaError,
    decode_control_record,
    decode_record,
    encode_control_record,
    encode_record,
    encode_records,
    generated_source,
    record_size,
    record_to_json,
    uuid_from_bytes,
    uuid_to_bytes,
)

U1 = "AAAAAAAAAAAAAAAAAAAAAQ"

# ----------------------------------------------------------------------------- value generation

_INT_BOUNDS = {
    "int8": (-128, 127), "int16": (-32768, 32767), "uint16": (0, 65535),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
}


def _primitive(t: str, rng: random.Random) -> Any:
    if t in _INT_BOUNDS:
        low, high = _INT_BOUNDS[t]
        return rng.choice([low, high, rng.randint(low, high), 1])
    if t == "bool":
        return rng.choice([True, False])
    if t == "float64":
        return rng.choice([0.5, -1e300, 123456.25])
    if t == "uuid":
        return uuid_from_bytes(rng.randbytes(16))
    if t == "string":
        return rng.choice(["", "a", "topic-ü-名前", "x" * 200])
    if t == "bytes":
        return rng.randbytes(rng.choice([0, 1, 40, 300]))
    raise AssertionError(t)


def _value(fs: FieldSpec, version: int, rng: random.Random, mode: str) -> Any:
    """A value for the field; mode "full" = non-default and non-empty, "empty" = empty arrays."""
    if mode == "null" and version in fs.nullable:
        return None
    if fs.is_array:
        count = 0 if mode == "empty" else rng.choice([1, 2, 3, 130])
        elem = FieldSpec(fs.name, fs.element_type, fs.versions, fields=fs.fields)
        return [_value(elem, version, rng, "full" if mode == "empty" else mode)
                for _ in range(count if fs.is_struct is False else min(count, 3))]
    if fs.is_struct:
        return _struct(fs.fields, version, rng, mode)
    value = _primitive(fs.type, rng)
    if fs.tag is not None and fs.is_default(value):  # a tagged field must differ to be written
        value = {"bool": True, "string": "t"}.get(fs.type, 7)
    return value


def _struct(fields: tuple[FieldSpec, ...], version: int, rng: random.Random, mode: str) -> dict:
    return {fs.json_name: _value(fs, version, rng, mode) for fs in fields
            if version in fs.versions}


def _all_versions() -> Iterator[tuple[str, int, tuple[FieldSpec, ...]]]:
    for spec in METADATA_RECORDS.values():
        for v in range(spec.valid_versions.low, spec.valid_versions.high + 1):
            yield spec.type_name, v, spec.fields


CASES = list(_all_versions())
CASE_IDS = [f"{t}-v{v}" for t, v, _ in CASES]


def _fill_defaults(fields: tuple[FieldSpec, ...], version: int, data: dict) -> dict:
    """What decode returns for `data`: every field of the version, defaults where absent."""
    out = {}
    for fs in fields:
        if version not in fs.versions:
            continue
        if fs.json_name in data:
            value = data[fs.json_name]
            if fs.is_struct and value is not None:
                if fs.is_array:
                    value = [_fill_defaults(fs.fields, version, e) for e in value]
                else:
                    value = _fill_defaults(fs.fields, version, value)
            out[fs.json_name] = value
        else:
            out[fs.json_name] = fs.default_value() if version not in fs.nullable or \
                fs.has_explicit_default or version in fs.tagged else None
    return out


# ----------------------------------------------------------------------------- round trips


def test_table_covers_every_record_type() -> None:
    assert len(CASES) == sum(s.valid_versions.high - s.valid_versions.low + 1
                             for s in METADATA_RECORDS.values())
    assert len(METADATA_RECORDS) == 25


@pytest.mark.parametrize(("type_name", "version", "fields"), CASES, ids=CASE_IDS)
@pytest.mark.parametrize("mode", ["full", "empty", "null"])
def test_round_trip_every_type_and_version(
    type_name: str, version: int, fields: tuple[FieldSpec, ...], mode: str
) -> None:
    rng = random.Random(f"{type_name}{version}{mode}")
    for _ in range(5):
        data = _struct(fields, version, rng, mode)
        record = MetadataRecord(type_name, version, data)
        raw = encode_record(record)
        decoded = decode_record(raw)
        assert decoded.type == type_name and decoded.version == version
        assert decoded.data == _fill_defaults(fields, version, data)
        assert encode_record(decoded) == raw
        assert record_size(record) == len(raw)


@pytest.mark.parametrize(("type_name", "version", "fields"), CASES, ids=CASE_IDS)
def test_round_trip_with_only_required_fields(
    type_name: str, version: int, fields: tuple[FieldSpec, ...]
) -> None:
    rng = random.Random(type_name)
    data = {fs.json_name: _value(fs, version, rng, "full") for fs in fields
            if version in fs.versions and version not in fs.tagged
            and not fs.has_explicit_default and version not in fs.nullable}
    raw = encode_record(MetadataRecord(type_name, version, data))
    assert decode_record(raw).data == _fill_defaults(fields, version, data)


@pytest.mark.parametrize("type_id", sorted(CONTROL_RECORDS))
def test_control_round_trip(type_id: int) -> None:
    spec = CONTROL_RECORDS[type_id]
    rng = random.Random(type_id)
    for mode in ("full", "empty"):
        data = _struct(spec.fields, 0, rng, mode)
        record = ControlRecord(spec.type_name, data)
        key, value = encode_control_record(record)
        assert key == bytes([0, 0, 0, type_id])
        assert decode_control_record(key, value) == ControlRecord(
            spec.type_name, _fill_defaults(spec.fields, 0, data))


def test_tagged_field_present_and_absent() -> None:
    base = {"partitionId": 1, "topicId": U1}
    absent = encode_record(MetadataRecord("PARTITION_CHANGE_RECORD", 0, base))
    assert absent.endswith(b"\x00")  # empty tagged section
    null_isr = encode_record(MetadataRecord("PARTITION_CHANGE_RECORD", 0, {**base, "isr": None}))
    assert null_isr == absent  # null is the default: not written
    empty_isr = encode_record(MetadataRecord("PARTITION_CHANGE_RECORD", 0, {**base, "isr": []}))
    assert empty_isr == absent[:-1] + bytes([1, 0, 1, 1])  # [] differs from null: tag 0, size 1
    assert decode_record(empty_isr).data["isr"] == []
    assert decode_record(absent).data["isr"] is None
    leader_default = encode_record(
        MetadataRecord("PARTITION_CHANGE_RECORD", 0, {**base, "leader": -2}))
    assert leader_default == absent


def test_null_versus_empty_untagged_nullable_string() -> None:
    base = {"resourceType": 2, "resourceName": "t", "name": "k"}
    null = encode_record(MetadataRecord("CONFIG_RECORD", 0, {**base, "value": None}))
    empty = encode_record(MetadataRecord("CONFIG_RECORD", 0, {**base, "value": ""}))
    assert null[-2:] == b"\x00\x00" and empty[-2:] == b"\x01\x00"
    assert decode_record(null).data["value"] is None
    assert decode_record(empty).data["value"] == ""


def test_unknown_tagged_fields_are_preserved() -> None:
    raw = bytes.fromhex("01 0c 00 02 61 00 05".replace(" ", "")) + bytes([1, 9, 2, 0xAB, 0xCD])
    record = decode_record(raw)
    assert record.data["_unknownTaggedFields"] == [{"tag": 9, "data": b"\xab\xcd"}]
    assert encode_record(record) == raw
    assert "_unknownTaggedFields" not in record_to_json(record)["data"]


def test_unknown_tags_merge_in_ascending_order() -> None:
    data = {"partitionId": 0, "topicId": U1, "replicas": [], "isr": [], "removingReplicas": [],
            "addingReplicas": [], "leaderRecoveryState": 1,
            "_unknownTaggedFields": [{"tag": 5, "data": b"\x07"}]}
    raw = encode_record(MetadataRecord("PARTITION_RECORD", 0, data))
    assert raw.endswith(bytes([2, 0, 1, 1, 5, 1, 7]))


# ----------------------------------------------------------------------------- encode errors


def _partition(**extra: Any) -> MetadataRecord:
    data = {"partitionId": 0, "topicId": U1, "replicas": [1], "isr": [1],
            "removingReplicas": [], "addingReplicas": [], **extra}
    return MetadataRecord("PARTITION_RECORD", 0, data)


@pytest.mark.parametrize(("record", "message"), [
    (MetadataRecord("NOPE_RECORD", 0, {}), "unknown record type 'NOPE_RECORD'"),
    (MetadataRecord("TOPIC_RECORD", 1, {}), "TOPIC_RECORD has no version 1"),
    (MetadataRecord("TOPIC_RECORD", 0, {"name": "t"}), "missing field 'topicId'"),
    (MetadataRecord("TOPIC_RECORD", 0, {"name": None, "topicId": U1}),
     "field 'name' is not nullable"),
    (MetadataRecord("TOPIC_RECORD", 0, {"name": "t", "topicId": "short"}), "field 'topicId'"),
    (MetadataRecord("TOPIC_RECORD", 0, {"name": "t", "topicId": U1, "extra": 1}),
     "unknown field(s) ['extra']"),
    (MetadataRecord("TOPIC_RECORD", 0, {"name": "x" * 40000, "topicId": U1}),
     "longer than Kafka's 32767"),
    (_partition(replicas=[1, 2**31]), "field 'replicas[1]' value 2147483648 is out of range"),
    (_partition(leaderRecoveryState=300), "field 'leaderRecoveryState' value 300"),
    (_partition(directories=[U1]), "field 'directories' does not exist in version 0"),
    (_partition(eligibleLeaderReplicas=[1]), "'eligibleLeaderReplicas' does not exist"),
    (MetadataRecord("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityName": "u"}], "key": "k",
                                               "value": 1.0, "remove": False}),
     "missing field 'entity[0].entityType'"),
    (MetadataRecord("SNAPSHOT_HEADER", 0, {}), "control record"),
])
def test_encode_errors_name_the_field(record: MetadataRecord, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        encode_record(record)
    assert message in str(info.value)


def test_missing_nullable_field_without_default_is_null() -> None:
    record = MetadataRecord("CLIENT_QUOTA_RECORD", 0, {"entity": [{"entityType": "user"}],
                                                       "key": "k", "value": 1.0, "remove": False})
    decoded = decode_record(encode_record(record))
    assert decoded.data["entity"] == [{"entityType": "user", "entityName": None}]


def test_out_of_version_field_at_default_is_accepted() -> None:
    raw = encode_record(_partition(directories=[], eligibleLeaderReplicas=None))
    assert raw == encode_record(_partition())


def test_control_encode_rejects_unknown_type() -> None:
    with pytest.raises(SchemaError, match="unknown control record type"):
        encode_control_record(ControlRecord("TOPIC_RECORD", {}))


# ----------------------------------------------------------------------------- decode errors


@pytest.mark.parametrize(("raw", "message"), [
    ("", "empty record value at byte 0"),
    ("00 02 00", "unsupported frame version 0"),
    ("02 02 00", "unsupported frame version 2"),
    ("01 06 00 00", "unknown metadata record apiKey 6"),
    ("01 63 00 00", "unknown metadata record apiKey 99"),
    ("01 02 01 00", "TOPIC_RECORD has no version 1"),
    ("01 14 00 00 00", "found 1 byte(s) of garbage after the record at byte 4"),
    ("01 02 00 00", "TOPIC_RECORD v0.name: null in a non-nullable field at byte 3"),
    ("01 02 00 05 61", "TOPIC_RECORD v0.name: length 4 runs past the end at byte 4"),
    ("01 02 00 02 ff", "TOPIC_RECORD v0.name: invalid UTF-8"),
    ("01 02 00 02 61 0000", "TOPIC_RECORD v0.topicId: truncated"),
    ("01 14 00 01 00 05 00", "tagged field 0 runs past the end"),
    ("01 17 00 01 00 03 01 00 00", "tagged field 'name' used 1 of its 3 bytes"),
    ("01 14 00 80", "truncated varint"),
])
def test_decode_errors_name_what_and_where(raw: str, message: str) -> None:
    with pytest.raises(RecordDecodeError) as info:
        decode_record(bytes.fromhex(raw.replace(" ", "")))
    assert message in str(info.value)


@pytest.mark.parametrize(("type_name", "version", "fields"), CASES, ids=CASE_IDS)
def test_every_truncation_is_a_decode_error(
    type_name: str, version: int, fields: tuple[FieldSpec, ...]
) -> None:
    raw = encode_record(MetadataRecord(type_name, version,
                                       _struct(fields, version, random.Random(1), "full")))
    for cut in range(len(raw)):
        with pytest.raises(RecordDecodeError) as info:
            decode_record(raw[:cut])
        assert 0 <= info.value.position <= cut


def test_decode_within_a_larger_buffer_reports_offsets_from_start() -> None:
    raw = encode_record(MetadataRecord("TOPIC_RECORD", 0, {"name": "t", "topicId": U1}))
    buf = b"\xff" * 10 + raw + b"\xff" * 5
    assert decode_record(buf, 10, 10 + len(raw)).data["name"] == "t"
    with pytest.raises(RecordDecodeError) as info:
        decode_record(buf, 10, 10 + len(raw) - 1)
    assert info.value.position == len(raw) - 1  # the tagged-field count, relative to start


def test_control_decode_rejects_bad_keys_and_garbage() -> None:
    with pytest.raises(RecordDecodeError, match="unknown control record type 0"):
        decode_control_record(b"\x00\x00\x00\x00", b"\x00\x00\x00")
    with pytest.raises(RecordDecodeError, match="key version 1"):
        decode_control_record(b"\x00\x01\x00\x03", b"\x00\x00\x00")
    with pytest.raises(RecordDecodeError, match="4 bytes"):
        decode_control_record(b"\x00\x03", b"\x00\x00\x00")
    with pytest.raises(RecordDecodeError, match="garbage"):
        decode_control_record(b"\x00\x00\x00\x04", b"\x00\x00\x00\x00")


# ----------------------------------------------------------------------------- JSON form


def test_json_matches_dump_log_payload_shape() -> None:
    record = _partition(leader=1, leaderEpoch=0, partitionEpoch=0)
    assert record_to_json(record) == {
        "type": "PARTITION_RECORD",
        "version": 0,
        "data": {"partitionId": 0, "topicId": U1, "replicas": [1], "isr": [1],
                 "removingReplicas": [], "addingReplicas": [], "leader": 1,
                 "leaderEpoch": 0, "partitionEpoch": 0},
    }


def test_json_writes_tagged_fields_only_when_not_default_in_schema_order() -> None:
    data = record_to_json(_partition(leaderRecoveryState=1))["data"]
    assert list(data) == ["partitionId", "topicId", "replicas", "isr", "removingReplicas",
                          "addingReplicas", "leader", "leaderRecoveryState", "leaderEpoch",
                          "partitionEpoch"]
    change = record_to_json(MetadataRecord("PARTITION_CHANGE_RECORD", 0,
                                           {"partitionId": 0, "topicId": U1, "isr": []}))
    assert change["data"] == {"partitionId": 0, "topicId": U1, "isr": []}


def test_json_nullable_untagged_and_defaults() -> None:
    data = record_to_json(MetadataRecord("REGISTER_BROKER_RECORD", 2, {
        "brokerId": 1, "incarnationId": U1, "brokerEpoch": 3, "endPoints": [], "features": [],
    }))["data"]
    assert data == {"brokerId": 1, "isMigratingZkBroker": False, "incarnationId": U1,
                    "brokerEpoch": 3, "endPoints": [], "features": [], "rack": None,
                    "fenced": True, "inControlledShutdown": False}


def test_json_bytes_are_standard_base64_and_floats_are_numbers() -> None:
    salt = bytes(range(250, 256))
    data = record_to_json(MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": "u", "mechanism": 1, "salt": salt, "storedKey": b"", "serverKey": b"\xff",
        "iterations": 4096}))["data"]
    assert data["salt"] == base64.b64encode(salt).decode() == "+vv8/f7/"
    assert data["serverKey"] == "/w=="
    quota = record_to_json(MetadataRecord("CLIENT_QUOTA_RECORD", 0, {
        "entity": [{"entityType": "user", "entityName": None}], "key": "k", "value": 5,
        "remove": False}))["data"]
    assert quota["value"] == 5.0 and isinstance(quota["value"], float)
    assert quota["entity"] == [{"entityType": "user", "entityName": None}]


def test_json_of_control_records() -> None:
    record = ControlRecord("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 9})
    assert record_to_json(record) == {"type": "SNAPSHOT_HEADER", "version": 0,
                                      "data": {"version": 0, "lastContainedLogTimestamp": 9}}


def test_json_rejects_what_the_version_cannot_express() -> None:
    with pytest.raises(SchemaError, match="non-default directories at version 0"):
        record_to_json(_partition(directories=[U1]))
    with pytest.raises(SchemaError, match="missing field 'topicId'"):
        record_to_json(MetadataRecord("TOPIC_RECORD", 0, {"name": "t"}))


# ----------------------------------------------------------------------------- uuids, source


@pytest.mark.parametrize(("text", "raw"), [
    ("AAAAAAAAAAAAAAAAAAAAAA", bytes(16)),
    ("AAAAAAAAAAAAAAAAAAAAAQ", bytes(15) + b"\x01"),
    ("AAAAAAAAAAAAAAAAAAAAAg", bytes(15) + b"\x02"),
    ("_____________________w", b"\xff" * 16),
])
def test_uuid_text_form(text: str, raw: bytes) -> None:
    assert uuid_to_bytes(text) == raw
    assert uuid_from_bytes(raw) == text


@pytest.mark.parametrize("bad", ["", "A" * 21, "A" * 23, "AAAAAAAAAAAAAAAAAAAAA!",
                                 "AAAAAAAAAAAAAAAAAAAAAB"])
def test_uuid_rejects_non_canonical_text(bad: str) -> None:
    with pytest.raises(ValueError):
        uuid_to_bytes(bad)


def test_generated_source_is_inspectable() -> None:
    source = generated_source("PARTITION_RECORD", 0)
    assert "def _enc_body" in source and "def _dec_body" in source
    with pytest.raises(SchemaError):
        generated_source("PARTITION_RECORD", 9)


# ----------------------------------------------------------------------------- encode_records and
# the single-pack fast path (must give the same bytes as the general code at every boundary)


def test_encode_records_equals_one_by_one_over_mixed_types() -> None:
    rng = random.Random(7)
    records = [MetadataRecord(t, v, _struct(f, v, rng, mode))
               for mode in ("full", "empty", "null") for t, v, f in CASES for _ in range(2)]
    rng.shuffle(records)
    records += [records[0]] * 5  # a run of one type and version
    assert encode_records(records) == [encode_record(r) for r in records]
    assert encode_records([]) == []


def test_encode_records_loop_bound_survives_a_longer_array_in_the_last_record() -> None:
    """A one-record run whose record holds a 2-element array: the compiled loop once reused
    the array length as its bound and indexed past the run (IndexError; a stand-in broker
    registration with kraft.version and metadata.version features hit it)."""
    features = [{"name": n, "minSupportedVersion": 0, "maxSupportedVersion": 1}
                for n in ("kraft.version", "metadata.version")]
    record = MetadataRecord("REGISTER_BROKER_RECORD", 3, {
        "brokerId": 1, "isMigratingZkBroker": True, "incarnationId": U1, "brokerEpoch": 7,
        "endPoints": [], "features": features, "rack": None, "fenced": True,
        "inControlledShutdown": False, "logDirs": [U1]})
    encode_records([record, record])  # compiles the run encoder
    assert encode_records([record]) == [encode_record(record)]
    three = [record] * 3
    assert encode_records(three) == [encode_record(r) for r in three]


def test_encode_records_names_the_bad_record() -> None:
    good = MetadataRecord("TOPIC_RECORD", 0, {"name": "a", "topicId": U1})
    bad = MetadataRecord("TOPIC_RECORD", 0, {"name": "b", "topicId": "nope"})
    with pytest.raises(SchemaError, match="TOPIC_RECORD v0: field 'topicId'"):
        encode_records([good, good, bad, good])


@pytest.mark.parametrize("n", [0, 1, 125, 126, 127, 128, 300])
def test_int_array_length_boundaries(n: int) -> None:
    record = _partition(replicas=list(range(n)), isr=[])
    raw = encode_record(record)
    prefix = bytes([n + 1]) if n + 1 < 128 else bytes([(n + 1) & 0x7F | 0x80, (n + 1) >> 7])
    start = 3 + 4 + 16
    assert raw[start:start + len(prefix)] == prefix
    assert decode_record(raw).data["replicas"] == list(range(n))
    assert encode_records([record]) == [raw]


@pytest.mark.parametrize("n", [0, 1, 125, 126, 127, 128, 5000])
def test_string_length_boundaries(n: int) -> None:
    record = MetadataRecord("TOPIC_RECORD", 0, {"name": "é" * (n // 2) + "x" * (n % 2),
                                                "topicId": U1})
    raw = encode_record(record)
    size = n + 1
    prefix = bytes([size]) if size < 128 else bytes([size & 0x7F | 0x80, size >> 7])
    assert raw[3:3 + len(prefix)] == prefix
    assert len(raw) == 3 + len(prefix) + n + 16 + 1
    assert decode_record(raw) == MetadataRecord("TOPIC_RECORD", 0, dict(record.data))


def test_fast_path_falls_back_for_tags_unknown_and_out_of_version_fields() -> None:
    plain = encode_record(_partition())
    assert plain[-1] == 0
    tagged = encode_record(_partition(leaderRecoveryState=1))
    assert tagged == plain[:-1] + bytes([1, 0, 1, 1])
    unknown = encode_record(_partition(_unknownTaggedFields=[{"tag": 3, "data": b"\x09"}]))
    assert unknown[-4:] == bytes([1, 3, 1, 9])
    assert encode_record(_partition(directories=[])) == plain
    with pytest.raises(SchemaError, match="unknown field"):
        encode_records([_partition(extra=1)])
