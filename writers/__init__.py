"""writers: everything zk2kraft knows about Kafka's formats (records, batches, log directories).

Public API only; implementation modules are `_`-prefixed.
"""

from writers._records import ControlRecord, FieldValue, MetadataRecord, RecordBatch
from writers.errors import (
    LogCorruptionError,
    SchemaError,
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)

__all__ = [
    "ControlRecord",
    "FieldValue",
    "LogCorruptionError",
    "MetadataRecord",
    "RecordBatch",
    "SchemaError",
    "VoterStateError",
    "VoterUnavailableError",
    "WriterError",
]
