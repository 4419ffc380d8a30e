"""The in-memory form of a KRaft record: data described by a schema, not a class per record.

A record is its Kafka type name, its schema version and its fields, keyed exactly as Kafka's
generated JSON converter (and so `kafka-dump-log --cluster-metadata-decoder`) names them:
camelCase (`topicId`, `leaderRecoveryState`). Values are plain Python: int, bool, float, str,
None, bytes, lists, and dicts for struct elements. A Uuid is its 22-character URL-safe base64 text
(`Uuid.toString`), so records compare, pickle (Spark) and print without conversion.

`writers.codec.schema` says which fields each (type, version) has; `writers.codec.serde` walks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Union

__all__ = ["ControlRecord", "FieldValue", "MetadataRecord", "RecordBatch"]

FieldValue = Union[
    int, bool, float, str, bytes, None, list["FieldValue"], Mapping[str, "FieldValue"]
]


@dataclass(frozen=True, slots=True)
class MetadataRecord:
    """One metadata record, e.g. `MetadataRecord("TOPIC_RECORD", 0, {"name": "t", "topicId": ...})`.

    Attributes:
        type: Kafka's `MetadataRecordType` name (`TOPIC_RECORD`).
        version: the record schema version (chosen from metadata.version by the translator).
        data: field name (Kafka JSON form) -> value. Fields left out take the schema default.
    """

    type: str
    version: int
    data: Mapping[str, FieldValue]


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A KRaft control record (`LEADER_CHANGE`, `SNAPSHOT_HEADER`, `SNAPSHOT_FOOTER`,
    `KRAFT_VERSION`, `KRAFT_VOTERS`); its data includes the schema's own `version` field."""

    type: str
    data: Mapping[str, FieldValue]


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """A v2 record batch as KRaft writes it: all data records or all control records.

    Attributes:
        base_offset: offset of the first record.
        leader_epoch: partitionLeaderEpoch of the batch.
        timestamp_ms: base and max timestamp (KRaft writes one value for both).
        records: the records, in offset order.
    """

    base_offset: int
    leader_epoch: int
    timestamp_ms: int
    records: tuple[MetadataRecord | ControlRecord, ...]

    @property
    def is_control(self) -> bool:
        """True for a control batch (attribute bit 0x20)."""
        return bool(self.records) and isinstance(self.records[0], ControlRecord)

    @property
    def last_offset(self) -> int:
        """Offset of the last record in the batch."""
        return self.base_offset + len(self.records) - 1
