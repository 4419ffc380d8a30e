"""writers: everything zk2kraft knows about Kafka's formats (records, batches, log directories).

Public API only; implementation modules are `_`-prefixed.
"""

from writers._logdir import (
    DEFAULT_SEGMENT_BYTES,
    EncodedBatch,
    VoterDir,
    directory_id_for,
    segment_name,
    snapshot_name,
)
from writers._logreader import (
    METADATA_PARTITION_DIR,
    METADATA_TOPIC_ID,
    FrameInfo,
    LogEntry,
    LogSource,
    MetaProperties,
    open_log_source,
    read_meta_properties,
    read_quorum_state,
    scan_frames,
)
from writers._quorum import QuorumWriter, VoterFailure, VoterLog
from writers._records import ControlRecord, FieldValue, MetadataRecord, RecordBatch
from writers.errors import (
    LogCorruptionError,
    SchemaError,
    VoterStateError,
    VoterUnavailableError,
    WriterError,
)

__all__ = [
    "DEFAULT_SEGMENT_BYTES",
    "METADATA_PARTITION_DIR",
    "METADATA_TOPIC_ID",
    "EncodedBatch",
    "FrameInfo",
    "LogEntry",
    "LogSource",
    "MetaProperties",
    "QuorumWriter",
    "VoterDir",
    "VoterFailure",
    "VoterLog",
    "directory_id_for",
    "open_log_source",
    "read_meta_properties",
    "read_quorum_state",
    "scan_frames",
    "segment_name",
    "snapshot_name",
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
