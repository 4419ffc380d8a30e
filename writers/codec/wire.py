"""What the generated encoders and decoders run against (`writers.codec.codegen` writes them).

The wire primitives every generated record function calls: uuids, precompiled structs, compact
lengths and strings, tagged fields, bounded reads and the decode error naming a field's offset.
`GENERATED_NAMESPACE` is the namespace each generated module starts from.
"""

from __future__ import annotations

import base64
import binascii
import struct
from typing import Any

from writers.codec.varint import _UVARINT, VarintError, read_uvarint, uvarint
from writers.errors import SchemaError

__all__ = [
    "FIXED_FORMAT",
    "FRAME_VERSION",
    "GENERATED_NAMESPACE",
    "MAX_STRING_BYTES",
    "UNKNOWN_TAGS",
    "RecordDecodeError",
    "packer_for",
    "uuid_from_bytes",
    "uuid_to_bytes",
]

FRAME_VERSION = 1
MAX_STRING_BYTES = 0x7FFF
UNKNOWN_TAGS = "_unknownTaggedFields"
FIXED_FORMAT = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "int64": "q",
    "float64": "d",
    "uuid": "16s",
}


class RecordDecodeError(SchemaError):
    """A record value cannot be decoded.

    Attributes:
        position: byte offset within the value where the problem was found.
        problem: what is wrong, naming the record type and field.
    """

    def __init__(self, problem: str, position: int) -> None:
        super().__init__(f"{problem} at byte {position}")
        self.problem = problem
        self.position = position


# ----------------------------------------------------------------------------- uuids


_UUID_CACHE_MAX = 1 << 16
_uuid_to_bytes_cache: dict[str, bytes] = {}
_uuid_to_text_cache: dict[bytes, str] = {}


def uuid_to_bytes(text: str) -> bytes:
    """Kafka `Uuid.fromString`: 22-character URL-safe base64 (no padding) -> 16 bytes.

    Raises:
        ValueError: not a canonical 22-character Uuid text.
    """
    raw = _uuid_to_bytes_cache.get(text)
    if raw is not None:
        return raw
    if not isinstance(text, str) or len(text) != 22:
        raise ValueError(f"a Uuid is 22 characters of URL-safe base64, got {text!r}")
    try:
        raw = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"invalid Uuid {text!r}: {exc}") from None
    if len(raw) != 16 or base64.urlsafe_b64encode(raw)[:22].decode("ascii") != text:
        raise ValueError(f"invalid Uuid {text!r}")
    if len(_uuid_to_bytes_cache) >= _UUID_CACHE_MAX:
        _uuid_to_bytes_cache.clear()
    _uuid_to_bytes_cache[text] = raw
    return raw


def uuid_from_bytes(raw: bytes) -> str:
    """Kafka `Uuid.toString`: 16 bytes -> 22-character URL-safe base64 text."""
    text = _uuid_to_text_cache.get(raw)
    if text is None:
        text = base64.urlsafe_b64encode(raw)[:22].decode("ascii")
        if len(_uuid_to_text_cache) >= _UUID_CACHE_MAX:
            _uuid_to_text_cache.clear()
        _uuid_to_text_cache[bytes(raw)] = text
    return text


# ----------------------------------------------------------------------------- helpers used by
# generated code (names bound into each generated module's namespace)

_struct_cache: dict[str, struct.Struct] = {}


def packer_for(fmt: str) -> struct.Struct:
    s = _struct_cache.get(fmt)
    if s is None:
        s = _struct_cache[fmt] = struct.Struct(">" + fmt)
    return s


def _array_struct(code: str, n: int) -> struct.Struct:
    return packer_for(f"{n}{code}")


_I32_STRUCTS = tuple(packer_for(f"{n}i") for n in range(256))


# an int32 array of n < 127 elements: its one-byte compact length (n + 1) and the elements
_I32_COUNTED = tuple(packer_for(f"B{n}i") for n in range(127))


def _i32s(n: int) -> struct.Struct:
    return _I32_STRUCTS[n] if n < 256 else _array_struct("i", n)


def _compact_len(n: int) -> bytes:
    return _UVARINT[n + 1] if n < 16383 else uvarint(n + 1)


def _enc_str(v: str) -> bytes:
    raw = v.encode("utf-8")
    if len(raw) > MAX_STRING_BYTES:
        raise SchemaError(f"string of {len(raw)} bytes is longer than Kafka's 32767")
    return _compact_len(len(raw)) + raw


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def _enc_str16(v: str) -> bytes:
    """A non-flexible string: int16 length, then UTF-8 (Kafka's `writeShort` + bytes)."""
    raw = v.encode("utf-8")
    if len(raw) > MAX_STRING_BYTES:
        raise SchemaError(f"string of {len(raw)} bytes is longer than Kafka's 32767")
    return _I16.pack(len(raw)) + raw


def _write_tags(out: bytearray, known: list[tuple[int, bytes]], unknown: Any) -> None:
    """Write a tagged-field section: known fields plus preserved unknown ones, ascending tags."""
    entries = list(known)
    if unknown:
        taken = {t for t, _ in known}
        for item in unknown:
            tag, data = item["tag"], bytes(item["data"])
            if tag in taken:
                raise SchemaError(f"unknown tagged field {tag} collides with a known tag")
            entries.append((tag, data))
        entries.sort(key=lambda e: e[0])
    out += uvarint(len(entries))
    for tag, payload in entries:
        out += uvarint(tag)
        out += uvarint(len(payload))
        out += payload


def _dec_err(where: str, problem: str, pos: int) -> RecordDecodeError:
    return RecordDecodeError(f"{where}: {problem}", pos)


def _ruv(b: bytes, p: int, end: int, where: str) -> tuple[int, int]:
    try:
        return read_uvarint(memoryview(b)[:end], p)
    except VarintError as exc:
        raise _dec_err(where, exc.problem, exc.pos) from None


def _rstr(b: bytes, p: int, e: int, where: str) -> str:
    try:
        return str(b[p:e], "utf-8")
    except UnicodeDecodeError as exc:
        raise _dec_err(where, f"invalid UTF-8 ({exc.reason})", p + exc.start) from None


# The names the generated code refers to, bound into each generated module's namespace.
GENERATED_NAMESPACE: dict[str, Any] = {
    "_UV": _UVARINT,
    "_uvs": uvarint,
    "_ub": uuid_to_bytes,
    "_UBC": _uuid_to_bytes_cache,
    "_ut": uuid_from_bytes,
    "_i32s": _i32s,
    "_I32C": _I32_COUNTED,
    "_ast": _array_struct,
    "_cl": _compact_len,
    "_es": _enc_str,
    "_es16": _enc_str16,
    "_I16": _I16,
    "_I32": _I32,
    "_wt": _write_tags,
    "_err": _dec_err,
    "_ruv": _ruv,
    "_rstr": _rstr,
    "SchemaError": SchemaError,
    "_UNK": UNKNOWN_TAGS,
}
