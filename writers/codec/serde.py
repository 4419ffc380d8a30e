"""Encode, decode, size and print KRaft records by walking the schema table in
`writers.codec.schema`.

Wire form (Kafka's `MetadataRecordSerde`, `MessageDataGenerator`, `ControlRecordUtils`): a metadata
record's value is frame version 1, uvarint apiKey, uvarint version, then the record body in Kafka's
flexible encoding (compact strings/bytes/arrays, a tagged-field section after every struct, tagged
fields written only when they differ from their default, in ascending tag order). A control record
is keyed by int16 0 + int16 type and its value is the body at version 0 with no frame.

The layouts are compiled from the table into Python functions by `writers.codec.codegen` (the
equivalent of Kafka's `MessageDataGenerator`); `generated_source()` shows what was built.

Errors: the fast path only catches what it must; when it fails, a slow walk of the same table finds
the field at fault and raises `SchemaError` naming record type, version and field. Decoders check
every bound explicitly and raise `RecordDecodeError` (a `SchemaError`) naming the field and the
byte offset within the value.

JSON (`record_to_json`): the object `kafka-dump-log --cluster-metadata-decoder` prints as
`payload`, i.e. Kafka's generated `*JsonConverter.write`: keys in schema declaration order; every
untagged field of the version is written; a tagged field only when it differs from its default
(`JsonConverterGenerator.generateWrite` guards tagged fields with `generateNonDefaultValueCheck`);
a field outside the version holding a non-default value throws; uuids as their 22-character text,
bytes as standard base64 with padding (Jackson `BinaryNode`), float64 as a JSON number.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from writers.codec.codegen import Decoder, Encoder, compile_record, many_encoders
from writers.codec.fields import FieldSpec, RecordSpec
from writers.codec.records import ControlRecord, FieldValue, MetadataRecord
from writers.codec.schema import CONTROL_RECORDS, METADATA_RECORDS, spec_for_type
from writers.codec.varint import VarintError, read_uvarint
from writers.codec.wire import (
    FRAME_VERSION,
    MAX_STRING_BYTES,
    UNKNOWN_TAGS,
    RecordDecodeError,
    uuid_from_bytes,
    uuid_to_bytes,
)
from writers.errors import SchemaError

__all__ = [
    "RecordDecodeError",
    "control_type_of_key",
    "decode_control_record",
    "decode_record",
    "encode_control_record",
    "encode_record",
    "encode_records",
    "generated_source",
    "record_size",
    "record_to_json",
    "uuid_from_bytes",
    "uuid_to_bytes",
]

_MAX_STRING_BYTES = MAX_STRING_BYTES
_CONTROL_KEY = struct.Struct(">hh")
_CONTROL_SCHEMA_VERSION = 0
_PRIMITIVE_JSON = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "int64", "float64", "uuid", "string"}
)
_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}


def generated_source(type_name: str, version: int) -> str:
    """The Python source generated for one record type and version (for review and debugging).

    Raises:
        SchemaError: unknown type or version.
    """
    return compile_record(_spec_checked(type_name, version), version)[2]


def _spec_checked(type_name: str, version: int) -> RecordSpec:
    spec = spec_for_type(type_name)
    if spec is None:
        raise SchemaError(f"unknown record type {type_name!r}")
    if spec.kind == "metadata" and version not in spec.valid_versions:
        raise SchemaError(
            f"{type_name} has no version {version} (valid versions {spec.valid_versions})"
        )
    return spec


# ----------------------------------------------------------------------------- diagnosis


def _type_problem(fs: FieldSpec, version: int, value: object, path: str) -> str | None:
    """Why `value` cannot be written as field `fs` (None if it can); slow, for error messages."""
    if value is None:
        if version in fs.nullable:
            return None
        return f"field {path!r} is not nullable in version {version}"
    t = fs.type
    if t in _INT_RANGES:
        low, high = _INT_RANGES[t]
        if not isinstance(value, int) or isinstance(value, bool):
            return f"field {path!r} must be an {t}, got {type(value).__name__}"
        if not low <= value <= high:
            return f"field {path!r} value {value} is out of range for {t}"
        return None
    if t == "bool":
        return None if isinstance(value, bool) else f"field {path!r} must be a bool"
    if t == "float64":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else f"field {path!r} must be a number"
    if t == "uuid":
        try:
            uuid_to_bytes(value)  # type: ignore[arg-type]
        except ValueError as exc:
            return f"field {path!r}: {exc}"
        return None
    if t == "string":
        if not isinstance(value, str):
            return f"field {path!r} must be a string, got {type(value).__name__}"
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"field {path!r} is not valid UTF-8 text: {exc.reason}"
        if len(raw) > _MAX_STRING_BYTES:
            return f"field {path!r} is {len(raw)} bytes, longer than Kafka's 32767"
        return None
    if t == "bytes":
        ok = isinstance(value, (bytes, bytearray, memoryview))
        return None if ok else f"field {path!r} must be bytes, got {type(value).__name__}"
    if fs.is_array:
        if not isinstance(value, (list, tuple)):
            return f"field {path!r} must be a list, got {type(value).__name__}"
        elem = FieldSpec(fs.name, fs.element_type, fs.versions, fields=fs.fields)
        for i, item in enumerate(value):
            if item is None:
                return f"field {path}[{i}] is null"
            problem = _type_problem(elem, version, item, f"{path}[{i}]")
            if problem:
                return problem
        return None
    if not isinstance(value, Mapping):
        return f"field {path!r} must be an object, got {type(value).__name__}"
    return _struct_problem(fs.fields, version, value, path + ".")


def _struct_problem(
    fields: tuple[FieldSpec, ...], version: int, data: Mapping[str, Any], prefix: str
) -> str | None:
    known = {fs.json_name for fs in fields} | {UNKNOWN_TAGS}
    extra = sorted(set(data) - known)
    if extra:
        return f"unknown field(s) {', '.join(prefix + e for e in extra)}"
    for fs in fields:
        path = prefix + fs.json_name
        if version not in fs.versions:
            if fs.json_name in data and not fs.is_default(data[fs.json_name]):
                return (f"field {path!r} does not exist in version {version} "
                        f"(versions {fs.versions}) but holds a non-default value")
            continue
        if fs.json_name not in data:
            tagged = version in fs.tagged
            if tagged or fs.has_explicit_default or version in fs.nullable:
                continue
            return f"missing field {path!r} (it has no default)"
        problem = _type_problem(fs, version, data[fs.json_name], path)
        if problem:
            return problem
    return None


def _diagnose(spec: RecordSpec, version: int, data: object, exc: Exception) -> SchemaError:
    if not isinstance(data, Mapping):
        return SchemaError(f"{spec.type_name} v{version}: data must be a mapping")
    problem = _struct_problem(spec.fields, version, data, "")
    if problem is None:
        problem = f"cannot encode: {exc!r}"
    return SchemaError(f"{spec.type_name} v{version}: {problem}")


# ----------------------------------------------------------------------------- public API


_record_encoders: dict[tuple[str, int], Encoder] = {}  # metadata records only


def encode_record(record: MetadataRecord) -> bytes:
    """Encode a metadata record as a record value: frame 1, apiKey, version, flexible body.

    Args:
        record: the record; fields missing from `data` take the schema default.

    Returns:
        The value bytes Kafka's `MetadataRecordSerde` reads.

    Raises:
        SchemaError: unknown type or version, a field missing that has no default, an unknown
            field, a value of the wrong type or range, or a non-default value in a field the
            version cannot express (Kafka's loss handler throws in the same case).
    """
    encoder = _record_encoders.get((record.type, record.version))
    if encoder is None:
        spec = _spec_checked(record.type, record.version)
        if spec.kind != "metadata":
            raise SchemaError(f"{record.type} is a control record; use encode_control_record")
        encoder = _record_encoders[(record.type, record.version)] = compile_record(
            spec, record.version)[0]
    try:
        return encoder(record.data)
    except SchemaError as exc:
        if str(exc).startswith(record.type):
            raise
        spec = _spec_checked(record.type, record.version)
        raise _diagnose(spec, record.version, record.data, exc) from exc
    except Exception as exc:  # the fast path failed: find the field at fault
        spec = _spec_checked(record.type, record.version)
        raise _diagnose(spec, record.version, record.data, exc) from exc


def encode_records(records: Sequence[MetadataRecord]) -> list[bytes]:
    """`[encode_record(r) for r in records]`, faster: each run of records of one type and
    version goes through one generated loop, with no Python call per record.

    Raises:
        SchemaError: as `encode_record`, for the first record that does not fit.
    """
    out: list[bytes] = []
    n = len(records)
    i = 0
    while i < n:
        first = records[i]
        many = many_encoders.get((first.type, first.version))
        if many is None:
            out.append(encode_record(first))  # compiles it, or raises the precise error
            i += 1
            continue
        done = len(out)
        try:
            i = many(records, i, out)
        except Exception:
            for r in records[i + len(out) - done:]:  # the loop failed: name the record at fault
                encode_record(r)
            raise
    return out


def record_size(record: MetadataRecord) -> int:
    """Size in bytes of `encode_record(record)`.

    Raises:
        SchemaError: as `encode_record`.
    """
    return len(encode_record(record))


def decode_record(buf: bytes, start: int = 0, end: int | None = None) -> MetadataRecord:
    """Decode one metadata record value occupying exactly `buf[start:end]`.

    Args:
        buf: bytes holding the value (a whole batch may be passed, with bounds, to avoid a copy).
        start: first byte of the value.
        end: one past its last byte (default: end of `buf`).

    Returns:
        The record; `data` holds every field of its version, tagged fields at their default
        included, in schema order (plus `_unknownTaggedFields` if the value had unknown tags).

    Raises:
        RecordDecodeError: frame version not 1, unknown apiKey, unsupported version, truncated or
            malformed field, or bytes left over; the message names the field and byte offset
            (counted from `start`).
    """
    if end is None:
        end = len(buf)
    if isinstance(buf, (bytearray, memoryview)):
        buf = bytes(buf)
    if start + 3 <= end and buf[start] == FRAME_VERSION and buf[start + 1] < 0x80 and (
        buf[start + 2] < 0x80
    ):
        hit = _frame_decoders.get((buf[start + 1], buf[start + 2]))
        p = start + 3
        if hit is None:
            hit = _frame_decoder(buf[start + 1], buf[start + 2], p - start)
    else:
        api_key, version, p = _read_frame(buf, start, end)
        hit = _frame_decoder(api_key, version, p - start)
    type_name, version, decoder = hit
    data, p = _run_decoder(decoder, buf, p, end, start)
    if p != end:
        raise RecordDecodeError(
            f"{type_name} v{version}: found {end - p} byte(s) of garbage after the record",
            p - start,
        )
    return MetadataRecord(type_name, version, data)


_frame_decoders: dict[tuple[int, int], tuple[str, int, Decoder]] = {}


def _read_frame(buf: bytes, start: int, end: int) -> tuple[int, int, int]:
    """Read frame version, apiKey and version (the slow path: multi-byte varints or errors)."""
    if start >= end:
        raise RecordDecodeError("empty record value", 0)
    view = memoryview(buf)[:end]
    try:
        frame, p = read_uvarint(view, start)
        if frame != FRAME_VERSION:
            hint = " (upgrades from the 2.8 preview are not supported)" if frame == 0 else ""
            raise RecordDecodeError(f"unsupported frame version {frame}{hint}", 0)
        api_key, p = read_uvarint(view, p)
        version, p = read_uvarint(view, p)
    except VarintError as exc:
        raise RecordDecodeError(f"record frame: {exc.problem}", exc.pos - start) from None
    return api_key, version, p


def _frame_decoder(api_key: int, version: int, version_pos: int) -> tuple[str, int, Decoder]:
    spec = METADATA_RECORDS.get(api_key)
    if spec is None:
        raise RecordDecodeError(f"unknown metadata record apiKey {api_key}", 1)
    if version not in spec.valid_versions:
        raise RecordDecodeError(
            f"{spec.type_name} has no version {version} (valid versions {spec.valid_versions})",
            version_pos - 1,
        )
    hit = (spec.type_name, version, compile_record(spec, version)[1])
    _frame_decoders[(api_key, version)] = hit
    return hit


def _run_decoder(
    decoder: Decoder, buf: bytes, p: int, end: int, start: int
) -> tuple[dict[str, FieldValue], int]:
    try:
        return decoder(buf, p, end)
    except RecordDecodeError as exc:
        raise RecordDecodeError(exc.problem, exc.position - start) from None


def encode_control_record(record: ControlRecord) -> tuple[bytes, bytes]:
    """Encode a control record as its (key, value).

    Returns:
        key = int16 0 + int16 type; value = the schema body at version 0 (no frame).

    Raises:
        SchemaError: unknown control type or a field that does not fit.
    """
    spec = spec_for_type(record.type)
    if spec is None or spec.kind != "control":
        raise SchemaError(f"unknown control record type {record.type!r}")
    encoder = compile_record(spec, _CONTROL_SCHEMA_VERSION)[0]
    try:
        value = encoder(record.data)
    except Exception as exc:
        raise _diagnose(spec, _CONTROL_SCHEMA_VERSION, record.data, exc) from exc
    return _CONTROL_KEY.pack(0, spec.api_key), value


def control_type_of_key(key: bytes) -> int:
    """The control record type id in a 4-byte control key.

    Raises:
        RecordDecodeError: the key is not 4 bytes or its version is not 0.
    """
    if len(key) != 4:
        raise RecordDecodeError(f"control record key must be 4 bytes, got {len(key)}", 0)
    key_version, type_id = _CONTROL_KEY.unpack(key)
    if key_version != 0:
        raise RecordDecodeError(f"control record key version {key_version} is not 0", 0)
    return int(type_id)


def decode_control_record(
    key: bytes, buf: bytes, start: int = 0, end: int | None = None
) -> ControlRecord:
    """Decode a control record from its 4-byte key and the value in `buf[start:end]`.

    Raises:
        RecordDecodeError: bad key, unknown type (ABORT/COMMIT markers are not KRaft's), a
            malformed value or leftover bytes; offsets count from `start`.
    """
    if end is None:
        end = len(buf)
    if isinstance(buf, (bytearray, memoryview)):
        buf = bytes(buf)
    type_id = control_type_of_key(bytes(key))
    spec = CONTROL_RECORDS.get(type_id)
    if spec is None:
        raise RecordDecodeError(f"unknown control record type {type_id}", 0)
    if start >= end:
        raise RecordDecodeError(f"{spec.type_name}: empty control record value", 0)
    decoder = compile_record(spec, _CONTROL_SCHEMA_VERSION)[1]
    data, p = _run_decoder(decoder, buf, start, end, start)
    if p != end:
        raise RecordDecodeError(
            f"{spec.type_name}: found {end - p} byte(s) of garbage after the record", p - start
        )
    return ControlRecord(spec.type_name, data)


def record_to_json(record: MetadataRecord | ControlRecord) -> dict[str, Any]:
    """The record as `kafka-dump-log --cluster-metadata-decoder` prints it.

    Metadata records give the `payload` object, `{"type", "version", "data"}`. Control records
    give `{"type": "SNAPSHOT_HEADER", "version": 0, "data": {...}}`, where `data` is what
    DumpLogSegments prints after `SnapshotHeader` / `KRaftVersion` / `KRaftVoters` (it prints
    LEADER_CHANGE only as `controlType: LEADER_CHANGE(2)`).

    Raises:
        SchemaError: unknown type/version, a missing field without default, or a non-default
            value in a field the version does not have (Kafka's converter throws too).
    """
    if isinstance(record, ControlRecord):
        spec = spec_for_type(record.type)
        if spec is None or spec.kind != "control":
            raise SchemaError(f"unknown control record type {record.type!r}")
        version = _CONTROL_SCHEMA_VERSION
    else:
        version = record.version
        spec = _spec_checked(record.type, version)
    label = f"{spec.type_name} v{version}"
    data = _struct_json(spec.fields, version, record.data, label, "")
    return {"type": spec.type_name, "version": version, "data": data}


def _struct_json(
    fields: tuple[FieldSpec, ...], version: int, data: Mapping[str, Any], label: str, prefix: str
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fs in fields:
        path = prefix + fs.json_name
        present = fs.json_name in data
        value = data[fs.json_name] if present else None
        if version not in fs.versions:
            if present and not fs.is_default(value):
                raise SchemaError(f"{label}: attempted to write a non-default {path} "
                                  f"at version {version}")
            continue
        if not present:
            if version in fs.tagged or fs.has_explicit_default:
                value = fs.default_value()
            elif version in fs.nullable:
                value = None
            else:
                raise SchemaError(f"{label}: missing field {path!r} (it has no default)")
        if version in fs.tagged and fs.is_default(value):
            continue
        out[fs.json_name] = _value_json(fs, version, value, label, path)
    return out


def _value_json(fs: FieldSpec, version: int, value: Any, label: str, path: str) -> Any:
    if value is None:
        if version not in fs.nullable:
            raise SchemaError(f"{label}: field {path!r} is not nullable")
        return None
    t = fs.element_type
    if fs.is_array:
        if t == "bytes":
            return [base64.b64encode(bytes(v)).decode("ascii") for v in value]
        if t in _PRIMITIVE_JSON:
            return list(value)
        return [_struct_json(fs.fields, version, v, label, f"{path}[].") for v in value]
    if t == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if t == "float64":
        return float(value)
    if t in _PRIMITIVE_JSON:
        return value
    return _struct_json(fs.fields, version, value, label, path + ".")

