"""Record batches v2 (magic 2) exactly as KRaft writes and strictly reads them.

Layout and rules: Kafka's `DefaultRecordBatch`, `DefaultRecord`,
`raft/.../internals/BatchBuilder.java` and `RecordsIterator.java`. KRaft batches are uncompressed,
CreateTime, non-transactional, producerId/epoch/baseSequence -1, one timestamp for base and max,
records with attributes 0, timestamp delta 0, contiguous offset deltas, no headers; data records
have a null key, control records a 4-byte key (int16 version 0, int16 type). CRC-32C (from the
`crc32c` package) covers attributes through the last record byte.

Decoding is strict: anything KRaft's `RecordsIterator` would reject, and anything KRaft never
writes (so cannot be re-encoded byte for byte), raises `LogCorruptionError(file, position,
offset, problem)`, position being the batch's first byte in the file. Nothing is skipped.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import crc32c

from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.codec.serde import (
    RecordDecodeError,
    control_type_of_key,
    decode_control_record,
    decode_record,
    encode_control_record,
    encode_record,
    encode_records,
)
from writers.codec.varint import _ZIGZAG_POS, VarintError, read_zigzag, zigzag, zigzag_size
from writers.errors import LogCorruptionError, WriterError

__all__ = [
    "BATCH_OVERHEAD",
    "BatchHeader",
    "BatchTooLargeError",
    "MAX_BATCH_BYTES",
    "MAX_RECORDS_PER_BATCH",
    "batch_records",
    "decode_batch",
    "encode_batch",
    "iter_batches",
    "pack_batch",
    "pack_batches",
    "read_batch_header",
]

MAX_BATCH_BYTES = 8 * 1024 * 1024
"""`KafkaRaftClient.MAX_BATCH_SIZE_BYTES`: no KRaft batch may be larger."""

MAX_RECORDS_PER_BATCH = 10_000
"""`QuorumController.MAX_RECORDS_PER_BATCH`: the controller's own cap, our default."""

BATCH_OVERHEAD = 61
"""Bytes of the v2 batch header (`RECORD_BATCH_OVERHEAD`)."""

_LOG_OVERHEAD = 12  # baseOffset + batchLength: bytes not counted in batchLength
# framing bytes around a value, at most: length 5 + attributes 1 + timestampDelta 1 +
# offsetDelta 5 + key length 1 + value length 5 + header count 1 (varints of int32 values)
_MAX_RECORD_OVERHEAD = 19
_MAGIC = 2
_ATTR_CONTROL = 0x20
_CRC_START = 21
_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC_FIELD = struct.Struct(">I")
_NO_PRODUCER = (-1, -1, -1)
_ZZ_TABLE = len(_ZIGZAG_POS)
# record prefix after the length: attributes 0, timestampDelta 0
_REC_PREFIX = b"\x00\x00"
_NULL_KEY = b"\x01"  # zigzag(-1)
_NO_HEADERS = b"\x00"


def _data_mids(count: int) -> tuple[bytes, ...]:
    """Per offset delta, the bytes between a data record's length and its value length:
    attributes 0, timestampDelta 0, offsetDelta, null key. Precomputed: the hot loop of packing."""
    return tuple(_REC_PREFIX + zigzag(i) + _NULL_KEY for i in range(count))


_DATA_MIDS = _data_mids(10_000)


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
        mids = _DATA_MIDS if count <= len(_DATA_MIDS) else _data_mids(count)
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
        attributes = _ATTR_CONTROL
    size = BATCH_OVERHEAD + len(body)
    if size > MAX_BATCH_BYTES:
        raise BatchTooLargeError(
            f"batch at offset {base_offset} of {count} records is {size} bytes, more than "
            f"KRaft's {MAX_BATCH_BYTES}"
        )
    header = bytearray(
        _HEADER.pack(
            base_offset, size - _LOG_OVERHEAD, leader_epoch, _MAGIC, 0, attributes, count - 1,
            timestamp_ms, timestamp_ms, -1, -1, -1, count,
        )
    )
    crc = crc32c.crc32c(body, crc32c.crc32c(memoryview(header)[_CRC_START:]))
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


# ----------------------------------------------------------------------------- decoding


def read_batch_header(buf: bytes, pos: int, *, file: str = "<buf>") -> BatchHeader:
    """Read and validate the header of the batch at `pos`: length, magic, CRC and KRaft's fixed
    fields, without decoding records.

    Raises:
        LogCorruptionError: truncated batch, bad magic, CRC mismatch, or a header KRaft would
            not write (compression, transactional, producer state, differing timestamps).
    """
    remaining = len(buf) - pos
    if remaining < BATCH_OVERHEAD:
        offset = struct.unpack_from(">q", buf, pos)[0] if remaining >= 8 else None
        raise LogCorruptionError(
            file, pos, offset, f"truncated batch: {remaining} byte(s) left, a header needs 61"
        )
    (base_offset, length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_seq, count) = _HEADER.unpack_from(buf, pos)
    size = length + _LOG_OVERHEAD
    if size < BATCH_OVERHEAD:
        raise LogCorruptionError(file, pos, base_offset,
                                 f"batch length {length} is smaller than a batch header")
    if size > remaining:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"truncated batch: header says {size} bytes, only {remaining} left in the file",
        )
    if magic != _MAGIC:
        raise LogCorruptionError(file, pos, base_offset, f"magic {magic}, expected 2")
    actual = crc32c.crc32c(memoryview(buf)[pos + _CRC_START: pos + size])
    if actual != crc:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"CRC-32C mismatch: stored {crc:#010x}, computed {actual:#010x} over bytes "
            f"{pos + _CRC_START}..{pos + size - 1}",
        )
    if attributes & ~_ATTR_CONTROL:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"attributes {attributes:#06x}: KRaft writes only 0x0000 (data) or 0x0020 (control)",
        )
    if (producer_id, producer_epoch, base_seq) != _NO_PRODUCER:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"producerId/epoch/baseSequence {producer_id}/{producer_epoch}/{base_seq}, "
            "KRaft writes -1/-1/-1",
        )
    if base_ts != max_ts:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"baseTimestamp {base_ts} differs from maxTimestamp {max_ts}",
        )
    if count < 1 or count != last_delta + 1:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"recordsCount {count} does not match lastOffsetDelta {last_delta}",
        )
    return BatchHeader(pos, base_offset, size, epoch, bool(attributes & _ATTR_CONTROL), count,
                       base_ts, crc)


def decode_batch(buf: bytes, pos: int, *, file: str = "<buf>") -> tuple[RecordBatch, int]:
    """Decode and validate the batch at `pos`.

    Args:
        buf: the file's bytes (bytes; other buffers are copied).
        pos: byte position of the batch.
        file: the file's name, for error messages.

    Returns:
        (the batch, the position just after it).

    Raises:
        LogCorruptionError: any header problem (see `read_batch_header`), a record whose length,
            timestamp delta, offset delta, key, value or header count breaks KRaft's rules, a
            value that does not decode, or bytes left over after the last record.
    """
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    header = read_batch_header(buf, pos, file=file)
    end = header.next_position
    count = header.records_count
    records: list[MetadataRecord | ControlRecord] = []
    p = pos + BATCH_OVERHEAD
    i = 0
    if not header.is_control and count <= len(_DATA_MIDS):
        # Fast path for the framing KRaft always writes: a one- or two-byte length, then exactly
        # `_DATA_MIDS[i]` (attributes 0, timestampDelta 0, offsetDelta i, null key), a one- or
        # two-byte value length and a zero header count. Anything else goes to `_record`, which
        # parses field by field and names the problem.
        mids = _DATA_MIDS
        while i < count:
            if p + 2 > end:
                break
            length = buf[p]
            q = p + 1
            if length >= 0x80:
                length = (length & 0x7F) | (buf[q] << 7)
                q += 1
                if length >= 1 << 14:
                    break
            rec_end = q + (length >> 1)
            mid = mids[i]
            m = q + len(mid)
            if length & 1 or rec_end > end or buf[q:m] != mid or m >= rec_end:
                break
            value_len = buf[m]
            v0 = m + 1
            if value_len >= 0x80:
                if m + 2 >= rec_end:
                    break
                value_len = (value_len & 0x7F) | (buf[v0] << 7)
                v0 += 1
                if value_len >= 1 << 14:
                    break
            if value_len & 1 or v0 + (value_len >> 1) + 1 != rec_end or buf[rec_end - 1] != 0:
                break
            try:
                records.append(decode_record(buf, v0, rec_end - 1))
            except RecordDecodeError:
                break  # `_record` reports it with the record's offset and position
            p = rec_end
            i += 1
    while i < count:
        record, p = _record(buf, p, end, i, header, file)
        records.append(record)
        i += 1
    if p != end:
        raise LogCorruptionError(file, pos, header.base_offset,
                                 f"{end - p} byte(s) after the last record of the batch")
    batch = RecordBatch(header.base_offset, header.leader_epoch, header.timestamp_ms,
                        tuple(records))
    return batch, end


def _record(
    buf: bytes, p: int, end: int, i: int, header: BatchHeader, file: str
) -> tuple[MetadataRecord | ControlRecord, int]:
    """Parse record `i` of a batch field by field, enforcing KRaft's rules; returns the record
    and the position after it, or raises naming what is wrong and where."""
    rec_pos = p
    control = header.is_control

    def bad(problem: str, at: int = rec_pos) -> LogCorruptionError:
        return LogCorruptionError(file, header.position, header.base_offset + i,
                                  f"record at byte {at}: {problem}")

    if p >= end:
        raise bad(f"the batch ends after {i} of its {header.records_count} records")
    try:
        length, p = read_zigzag(buf, p)
        rec_end = p + length
        if length <= 0 or rec_end > end:
            raise bad(f"record length {length} does not fit the batch (ends at byte {end})")
        p += 1  # attributes: unused, ignored by Kafka's readers
        ts_delta, p = read_zigzag(buf, p, max_bytes=10)
        if ts_delta != 0:
            raise bad(f"timestampDelta {ts_delta}; KRaft requires 0")
        offset_delta, p = read_zigzag(buf, p)
        if offset_delta != i:
            raise bad(f"offsetDelta {offset_delta}, expected {i} (offsets not contiguous)")
        key_len, p = read_zigzag(buf, p)
        key = b""
        if control:
            if key_len != 4:
                raise bad(f"control record key length {key_len}, expected 4")
            key = buf[p:p + 4]
            p += 4
        elif key_len != -1:
            raise bad(f"data record key length {key_len}; KRaft data records have a null key")
        value_len, p = read_zigzag(buf, p)
        if value_len <= 0 or p + value_len > rec_end:
            raise bad(f"value length {value_len} is empty or runs past the record")
        value_start = p
        value_end = p = p + value_len
        headers, p = read_zigzag(buf, p)
        if headers != 0:
            raise bad(f"{headers} header(s); KRaft records have none")
        if p != rec_end:
            raise bad(f"record length {length} but its fields end at byte {p}")
        try:
            if control:
                control_type_of_key(key)
                return decode_control_record(key, buf, value_start, value_end), p
            return decode_record(buf, value_start, value_end), p
        except RecordDecodeError as exc:
            raise bad(exc.problem, value_start + exc.position) from None
    except VarintError as exc:
        raise bad(f"{exc.problem} at byte {exc.pos}") from None


def iter_batches(buf: bytes, *, file: str = "<buf>", start: int = 0) -> Iterator[
    tuple[int, RecordBatch]
]:
    """Walk a whole segment or snapshot, batch by batch, validating everything.

    Args:
        buf: the file's bytes.
        file: its name, for errors.
        start: position of the first batch.

    Yields:
        (byte position of the batch, the batch).

    Raises:
        LogCorruptionError: at the first invalid batch, including a truncated tail; the batches
            before it have been yielded, nothing after it is.
    """
    if not isinstance(buf, bytes):
        buf = bytes(buf)
    pos = start
    while pos < len(buf):
        batch, nxt = decode_batch(buf, pos, file=file)
        yield pos, batch
        pos = nxt
