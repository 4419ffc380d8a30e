"""What a record schema is: version ranges, fields and records, in Kafka's JSON schemas' terms.

Field entries keep the schema's own spelling: Kafka field names (`PartitionId`), Kafka type text
(`int32`, `[]int32`, `[]BrokerEndpoint`), version ranges (`"0+"`, `"1-2"`) and defaults as the
JSON text (`"-1"`, `"null"`, `"true"`). `FieldSpec.json_name` derives the JSON converter's key
(`partitionId`) and `RecordSpec.type_name` the `MetadataRecordType` name (`PARTITION_RECORD`)
exactly as Kafka's generators do, so the names cannot drift from the schema names. The tables
themselves are `writers.codec.schema` (records) and `writers.codec.rpc_schema` (Raft RPCs).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from writers.codec.records import FieldValue

__all__ = ["NO_VERSIONS", "PRIMITIVE_TYPES", "FieldSpec", "RecordSpec", "Versions"]

PRIMITIVE_TYPES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "int64", "float64", "uuid", "string", "bytes",
     "records"}
)
_MAX_VERSION = 0x7FFF


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range, as Kafka's `Versions` ("0+", "1-2", "3", "none")."""

    low: int
    high: int

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        """Parse Kafka's range syntax; None or "none" is the empty range."""
        if text is None or text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), _MAX_VERSION)
        if "-" in text:
            low, high = text.split("-", 1)
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        """True for the empty range (a field that is never nullable / never tagged)."""
        return self.low > self.high

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == _MAX_VERSION:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


NO_VERSIONS = Versions(1, 0)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a record or struct, in the schema's terms.

    Attributes:
        name: Kafka field name (`PartitionId`).
        type: Kafka type text: a primitive, `[]<primitive>`, `[]<Struct>` or a struct name.
        versions: versions of the enclosing message the field exists in.
        nullable: versions in which it may be null.
        tag: tag number of a tagged field, else None.
        tagged: versions in which it is tagged (only tagged fields have any).
        default: the schema's `default` text; "" = the type's implicit default.
        fields: element fields of a struct or struct array.
        ignorable: the schema's `ignorable`: a non-default value in a version without the
            field is dropped when writing instead of raising (RPC fields such as Fetch's
            `MaxBytes`).
        flexible: the field's own `flexibleVersions` override, or None to follow the message
            (only RequestHeader's ClientId has one: "none", always an int16-length string).
    """

    name: str
    type: str
    versions: Versions
    nullable: Versions = NO_VERSIONS
    tag: int | None = None
    tagged: Versions = NO_VERSIONS
    default: str = ""
    fields: tuple[FieldSpec, ...] = ()
    ignorable: bool = False
    flexible: Versions | None = None

    @property
    def json_name(self) -> str:
        """Kafka's JSON key: the field name with its first letter lower-cased (`lowerCaseFirst`)."""
        return self.name[:1].lower() + self.name[1:]

    @property
    def is_array(self) -> bool:
        """True for `[]X` types."""
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        """The element type of an array (`int32`, `BrokerEndpoint`), or the type itself."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """True for a struct or an array of structs."""
        return self.element_type not in PRIMITIVE_TYPES

    @property
    def has_explicit_default(self) -> bool:
        """True when the schema names a default, so the field may be left out of `data`."""
        return self.default != ""

    def default_value(self) -> FieldValue:
        """The default as a Python value (Kafka's `FieldSpec.fieldDefault`): explicit or implicit.

        Implicit defaults: 0 for numbers, False, "" for strings, b"" for bytes, the zero Uuid,
        an empty list for arrays and a struct of defaults for a struct. `"null"` gives None.
        """
        text = self.default
        if text == "null":
            return None
        if self.is_array:
            return []
        kind = self.type
        if kind == "bool":
            return text.lower() == "true"
        if kind in ("int8", "int16", "uint16", "int32", "int64"):
            return int(text, 0) if text else 0
        if kind == "float64":
            return float(text) if text else 0.0
        if kind == "string":
            return text
        if kind == "bytes":
            return b""
        if kind == "records":
            return None
        if kind == "uuid":
            return "AAAAAAAAAAAAAAAAAAAAAA"
        return {f.json_name: f.default_value() for f in self.fields}

    def is_default(self, value: FieldValue) -> bool:
        """True if `value` equals this field's default (Kafka writes tagged fields only if not)."""
        default = self.default_value()
        if default is None:
            return value is None
        if value is None:
            return False
        if isinstance(default, list):
            return isinstance(value, (list, tuple)) and len(value) == 0
        if isinstance(default, float) and isinstance(value, (int, float)):
            # Kafka compares doubles with Double.compare, so -0.0 is not the default 0.0
            return value == default and math.copysign(1.0, value) == math.copysign(1.0, default)
        return bool(value == default)


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """One record schema.

    Attributes:
        name: the schema name (`PartitionRecord`, `SnapshotHeaderRecord`).
        api_key: the metadata apiKey, or the control record type id for control records.
        valid_versions: versions the schema defines.
        fields: top-level fields in declaration order.
        kind: "metadata" (framed, in data batches), "control" (keyed, in control batches),
            or, for Kafka's protocol messages (`writers.codec.rpc_schema`), "request", "response"
            or "header".
        type_name: `MetadataRecordType` / `ControlRecordType` name (`PARTITION_RECORD`); a
            protocol message's schema name (`FetchRequest`).
        flexible: versions using the flexible encoding (compact lengths, tagged fields);
            every KRaft record is flexible ("0+"), protocol messages say in `flexibleVersions`.
    """

    name: str
    api_key: int
    valid_versions: Versions
    fields: tuple[FieldSpec, ...]
    kind: Literal["metadata", "control", "request", "response", "header"] = "metadata"
    type_name: str = field(default="")
    flexible: Versions = Versions(0, _MAX_VERSION)

    def field_named(self, json_name: str) -> FieldSpec:
        """The top-level field whose JSON name is `json_name`.

        Raises:
            KeyError: there is none.
        """
        for f in self.fields:
            if f.json_name == json_name:
                return f
        raise KeyError(json_name)


def _snake_upper(name: str) -> str:
    """Kafka's `MessageGenerator.toSnakeCase(name).toUpperCase()`: `ZkMigrationStateRecord` ->
    `ZK_MIGRATION_STATE_RECORD`; a capital after a capital gets no underscore."""
    out: list[str] = []
    prev_upper = True
    for c in name:
        if c.isupper():
            if not prev_upper:
                out.append("_")
            out.append(c)
            prev_upper = True
        else:
            out.append(c.upper())
            prev_upper = False
    return "".join(out)


def _f(
    name: str,
    type_: str,
    versions: str = "0+",
    *,
    nullable: str | None = None,
    tag: int | None = None,
    tagged: str | None = None,
    default: str = "",
    fields: Iterable[FieldSpec] = (),
    ignorable: bool = False,
    flexible: str | None = None,
) -> FieldSpec:
    """Build a FieldSpec from the schema JSON's own spelling (kept short so the table reads like
    the JSON it was copied from)."""
    return FieldSpec(
        name=name,
        type=type_,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tag=tag,
        tagged=Versions.parse(tagged),
        default=default,
        fields=tuple(fields),
        ignorable=ignorable,
        flexible=None if flexible is None else Versions.parse(flexible),
    )


def _check_struct(owner: str, fields: tuple[FieldSpec, ...]) -> None:
    """Reject a table mistake at import: duplicate names or tags, a tag without tagged versions."""
    names: set[str] = set()
    tags: dict[int, str] = {}
    for fs in fields:
        if fs.json_name in names:
            raise RuntimeError(f"{owner}: duplicate field {fs.name}")
        names.add(fs.json_name)
        if (fs.tag is None) != fs.tagged.empty:
            raise RuntimeError(f"{owner}.{fs.name}: tag and taggedVersions must come together")
        if fs.tag is not None:
            if fs.tag in tags:
                raise RuntimeError(
                    f"{owner}: tag {fs.tag} claimed by both {tags[fs.tag]} and {fs.name}"
                )
            tags[fs.tag] = fs.name
        if fs.is_struct and not fs.fields:
            raise RuntimeError(f"{owner}.{fs.name}: struct type {fs.type} has no fields")
        if fs.fields:
            _check_struct(f"{owner}.{fs.name}", fs.fields)
