"""Record batches v2 (magic 2) exactly as KRaft writes and strictly reads them.

Layout and rules: Kafka's `DefaultRecordBatch`, `DefaultRecord`,
`raft/.../internals/BatchBuilder.java` and `RecordsIterator.java`. KRaft batches are uncompressed,
CreateTime, non-transactional, producerId/epoch/baseSequence -1, one timestamp for base and max,
records with attributes 0, timestamp delta 0, contiguous offset deltas, no headers; data records
have a null key, control records a 4-byte key (int16 version 0, int16 type). CRC-32C (from the
`crc32c` package) covers attributes through the last record byte.

Decoding, strict (anything KRaft's `RecordsIterator` would reject or never writes raises
`LogCorruptionError`), is `writers.codec.batch_decode`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import crc32c

from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.codec.serde import (
    encode_control_record,
    encode_record,
    encode_records,
)
from writers.codec.varint import _ZIGZAG_POS, zigzag, zigzag_size
from writers.errors import WriterError

__all__ = [
    "ATTR_CONTROL",
    "CRC_START",
    "DATA_MIDS",
    "HEADER_STRUCT",
    "LOG_OVERHEAD",
    "MAGIC",
    "NO_PRODUCER",
    "BATCH_OVERHEAD",
    "BatchHeader",
    "BatchTooLargeError",
    "MAX_BATCH_BYTES",
    "MAX_RECORDS_PER_BATCH",
    "batch_records",
    "encode_batch",
    "pack_batch",
    "pack_batches",
]

MAX_BATCH_BYTES = 8 * 1024 * 1024
"""`KafkaRaftClient.MAX_BATCH_SIZE_BYTES`: no KRaft batch may be larger."""

MAX_RECORDS_PER_BATCH = 10_000
"""`QuorumController.MAX_RECORDS_PER_BATCH`: the controller's own cap, our default."""

BATCH_OVERHEAD = 61
"""Bytes of the v2 batch header (`RECORD_BATCH_OVERHEAD`)."""

LOG_OVERHEAD = 12  # baseOffset + batchLength: bytes not counted in batchLength
# framing bytes around a value, at most: length 5 + attributes 1 + timestampDelta 1 +
# offsetDelta 5 + key length 1 + value length 5 + header count 1 (varints of int32 values)
_MAX_RECORD_OVERHEAD = 19
MAGIC = 2
ATTR_CONTROL = 0x20
CRC_START = 21
HEADER_STRUCT = struct.Struct(">qiibIhiqqqhii")
_CRC_FIELD = struct.Struct(">I")
NO_PRODUCER = (-1, -1, -1)
_ZZ_TABLE = len(_ZIGZAG_POS)
# record prefix after the length: attributes 0, timestampDelta 0
_REC_PREFIX = b"\x00\x00"
_NULL_KEY = b"\x01"  # zigzag(-1)
_NO_HEADERS = b"\x00"


def _data_mids(count: int) -> tuple[bytes, ...]:
    """Per offset delta, the bytes between a data record's length and its value length:
    attributes 0, timestampDelta 0, offsetDelta, null key. Precomputed: the hot loop of packing."""
    return tuple(_REC_PREFIX + zigzag(i) + _NULL_KEY for i in range(count))


DATA_MIDS = _data_mids(10_000)


class BatchTooLargeError(WriterError):
    """A batch would exceed KRaft's 8 MiB limit (or a single record does not fit one)."""


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The validated header of one batch (what log recovery needs without decoding records).

    Attributes:
        position: byte position of the batch in its file.
        base_offset: offset of the first record.
        size: total bytes of the batch, header included.
        leader_epoch: partitionLeaderEpoch.
        is_control: True for a control batch.
        records_count: number of records.
        timestamp_ms: base (= max) timestamp.
        crc: the stored (and verified) CRC-32C.
    """

    position: int
    base_offset: int
    size: int
    leader_epoch: int
    is_control: bool
    records_count: int
    timestamp_ms: int
    crc: int

    @property
    def last_offset(self) -> int:
        """Offset of the last record."""
        return self.base_offset + self.records_count - 1

    @property
    def next_position(self) -> int:
        """Byte position just after this batch."""
        return self.position + self.size


# ----------------------------------------------------------------------------- encoding


def pack_batch(
    base_offset: int,
    leader_epoch: int,
    timestamp_ms: int,
    values: Sequence[bytes],
    *,
    control_keys: Sequence[bytes] | None = None,
) -> bytes:
    """Frame already-encoded record values into one v2 batch.

    Args:
        base_offset: offset of the first record.
        leader_epoch: partitionLeaderEpoch (not covered by the CRC).
        timestamp_ms: base and max timestamp.
        values: record values (`encode_record` output, or control values).
        control_keys: for a control batch, the 4-byte key of each record; None for data.

    Returns:
        The batch bytes.

    Raises:
        WriterError: no values, or keys and values differ in number.
        BatchTooLargeError: the batch would exceed 8 MiB.
    """
    count = len(values)
    if count == 0:
        raise WriterError("a record batch needs at least one record")
    zz = _ZIGZAG_POS
    if control_keys is None:
        parts: list[bytes] = []
        add = parts.append
        mids = DATA_MIDS if count <= len(DATA_MIDS) else _data_mids(count)
        for mid, value in zip(mids, values, strict=False):  # stops at the end of `values`
            n = len(value)
            zn = zz[n] if n < _ZZ_TABLE else zigzag(n)
            rec_len = len(mid) + len(zn) + n + 1
            add(zz[rec_len] if rec_len < _ZZ_TABLE else zigzag(rec_len))
            add(mid)
            add(zn)
            add(value)
            add(_NO_HEADERS)
        body = b"".join(parts)
        attributes = 0
    else:
        if len(control_keys) != count:
            raise WriterError("a control batch needs one key per record")
        records = []
        for i, (key, value) in enumerate(zip(control_keys, values, strict=True)):
            rec = b"".join(
                (_REC_PREFIX, zigzag(i), zigzag(len(key)), key, zigzag(len(value)), value,
                 _NO_HEADERS)
            )
            records.append(zigzag(len(rec)) + rec)
        body = b"".join(records)
        attributes = ATTR_CONTROL
    size = BATCH_OVERHEAD + len(body)
    if size > MAX_BATCH_BYTES:
        raise BatchTooLargeError(
            f"batch at offset {base_offset} of {count} records is {size} bytes, more than "
            f"KRaft's {MAX_BATCH_BYTES}"
        )
    header = bytearray(
        HEADER_STRUCT.pack(
            base_offset, size - LOG_OVERHEAD, leader_epoch, MAGIC, 0, attributes, count - 1,
            timestamp_ms, timestamp_ms, -1, -1, -1, count,
        )
    )
    crc = crc32c.crc32c(body, crc32c.crc32c(memoryview(header)[CRC_START:]))
    _CRC_FIELD.pack_into(header, 17, crc)
    return b"".join((header, body))


def encode_batch(batch: RecordBatch) -> bytes:
    """Encode a RecordBatch (all data records or all control records) as KRaft writes it.

    Raises:
        SchemaError: a record does not fit its schema.
        WriterError: the batch is empty or mixes data and control records.
        BatchTooLargeError: it would exceed 8 MiB.
    """
    records = batch.records
    if not records:
        raise WriterError(f"batch at offset {batch.base_offset} has no records")
    if batch.is_control:
        keys: list[bytes] = []
        values: list[bytes] = []
        for r in records:
            if not isinstance(r, ControlRecord):
                raise WriterError(
                    f"batch at offset {batch.base_offset} mixes control and data records"
                )
            key, value = encode_control_record(r)
            keys.append(key)
            values.append(value)
        return pack_batch(
            batch.base_offset, batch.leader_epoch, batch.timestamp_ms, values, control_keys=keys
        )
    data_values: list[bytes] = []
    for r in records:
        if not isinstance(r, MetadataRecord):
            raise WriterError(f"batch at offset {batch.base_offset} mixes control and data records")
        data_values.append(encode_record(r))
    return pack_batch(batch.base_offset, batch.leader_epoch, batch.timestamp_ms, data_values)


def _record_size(offset_delta: int, value_len: int, key_len: int = -1) -> int:
    """Bytes one record takes in a batch: length varint + attributes .. headers."""
    body = 2 + zigzag_size(offset_delta) + zigzag_size(key_len) + max(key_len, 0)
    body += zigzag_size(value_len) + value_len + 1
    return zigzag_size(body) + body


def _plan(
    value_lens: Sequence[int], max_records: int, max_bytes: int, key_len: int, first_offset: int
) -> list[tuple[int, int]]:
    """Split record indices into [start, stop) runs that respect both limits.

    Each run of up to `max_records` is first checked against a cheap upper bound (a record
    costs at most its value plus `_MAX_RECORD_OVERHEAD` framing bytes); only a run that might
    not fit is sized record by record.
    """
    if max_records < 1:
        raise WriterError("max_records must be at least 1")
    if not BATCH_OVERHEAD < max_bytes <= MAX_BATCH_BYTES:
        raise WriterError(f"max_bytes must be in ({BATCH_OVERHEAD}, {MAX_BATCH_BYTES}]")
    runs: list[tuple[int, int]] = []
    count = len(value_lens)
    extra = _MAX_RECORD_OVERHEAD + max(key_len, 0)
    start = 0
    while start < count:
        stop = min(start + max_records, count)
        bound = BATCH_OVERHEAD + sum(value_lens[start:stop]) + extra * (stop - start)
        if bound <= max_bytes:
            runs.append((start, stop))
            start = stop
            continue
        size = BATCH_OVERHEAD
        i = start
        while i < stop:
            rec = _record_size(i - start, value_lens[i], key_len)
            if size + rec > max_bytes:
                break
            size += rec
            i += 1
        if i == start:
            raise BatchTooLargeError(
                f"record at offset {first_offset + i} ({value_lens[i]} bytes) does not fit a "
                f"batch of {max_bytes} bytes"
            )
        runs.append((start, i))
        start = i
    return runs


def pack_batches(
    base_offset: int,
    leader_epoch: int,
    timestamp_ms: int,
    values: Sequence[bytes],
    *,
    max_records: int = MAX_RECORDS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[bytes]:
    """Frame encoded data-record values into consecutive batches of ≤ max_records and ≤ max_bytes.

    Returns:
        The batches in order; the first starts at `base_offset`, each next one where the
        previous ended.

    Raises:
        BatchTooLargeError: a single record cannot fit in `max_bytes`.
        WriterError: a limit is out of range.
    """
    out: list[bytes] = []
    for start, stop in _plan(list(map(len, values)), max_records, max_bytes, -1, base_offset):
        out.append(pack_batch(base_offset + start, leader_epoch, timestamp_ms, values[start:stop]))
    return out


def batch_records(
    records: Sequence[MetadataRecord | ControlRecord],
    *,
    base_offset: int,
    leader_epoch: int,
    timestamp_ms: int,
    max_records: int = MAX_RECORDS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[tuple[RecordBatch, bytes]]:
    """Group records into batches (control records never share a batch with data records),
    each of ≤ max_records and ≤ max_bytes, encoding every record once.

    Returns:
        (RecordBatch, its bytes) pairs with contiguous offsets from `base_offset`.

    Raises:
        SchemaError: a record does not fit its schema.
        BatchTooLargeError: a single record cannot fit in `max_bytes`.
    """
    out: list[tuple[RecordBatch, bytes]] = []
    offset = base_offset
    i = 0
    while i < len(records):
        control = isinstance(records[i], ControlRecord)
        j = i
        while j < len(records) and isinstance(records[j], ControlRecord) == control:
            j += 1
        group = records[i:j]
        if control:
            pairs = [encode_control_record(r) for r in group]  # type: ignore[arg-type]
            values = [v for _, v in pairs]
            keys: list[bytes] | None = [k for k, _ in pairs]
            key_len = 4
        else:
            values = encode_records(group)  # type: ignore[arg-type]
            keys = None
            key_len = -1
        for start, stop in _plan(list(map(len, values)), max_records, max_bytes, key_len,
                                 offset):
            data = pack_batch(
                offset + start, leader_epoch, timestamp_ms, values[start:stop],
                control_keys=None if keys is None else keys[start:stop],
            )
            batch = RecordBatch(offset + start, leader_epoch, timestamp_ms,
                                tuple(group[start:stop]))
            out.append((batch, data))
        offset += len(group)
        i = j
    return out
