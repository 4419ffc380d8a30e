"""Read record batches v2 strictly, as KRaft's `RecordsIterator` does (the layout: `batch`).

Anything KRaft would reject, and anything KRaft never writes (so cannot be re-encoded byte for
byte), raises `LogCorruptionError(file, position, offset, problem)`, position being the batch's
first byte in the file. Nothing is skipped.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import crc32c

from writers.codec.batch import (
    ATTR_CONTROL,
    BATCH_OVERHEAD,
    CRC_START,
    DATA_MIDS,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    MAGIC,
    NO_PRODUCER,
    BatchHeader,
)
from writers.codec.records import ControlRecord, MetadataRecord, RecordBatch
from writers.codec.serde import (
    RecordDecodeError,
    control_type_of_key,
    decode_control_record,
    decode_record,
)
from writers.codec.varint import VarintError, read_zigzag
from writers.errors import LogCorruptionError

__all__ = ["decode_batch", "iter_batches", "read_batch_header"]


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
     producer_id, producer_epoch, base_seq, count) = HEADER_STRUCT.unpack_from(buf, pos)
    size = length + LOG_OVERHEAD
    if size < BATCH_OVERHEAD:
        raise LogCorruptionError(file, pos, base_offset,
                                 f"batch length {length} is smaller than a batch header")
    if size > remaining:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"truncated batch: header says {size} bytes, only {remaining} left in the file",
        )
    if magic != MAGIC:
        raise LogCorruptionError(file, pos, base_offset, f"magic {magic}, expected 2")
    actual = crc32c.crc32c(memoryview(buf)[pos + CRC_START: pos + size])
    if actual != crc:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"CRC-32C mismatch: stored {crc:#010x}, computed {actual:#010x} over bytes "
            f"{pos + CRC_START}..{pos + size - 1}",
        )
    if attributes & ~ATTR_CONTROL:
        raise LogCorruptionError(
            file, pos, base_offset,
            f"attributes {attributes:#06x}: KRaft writes only 0x0000 (data) or 0x0020 (control)",
        )
    if (producer_id, producer_epoch, base_seq) != NO_PRODUCER:
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
    return BatchHeader(pos, base_offset, size, epoch, bool(attributes & ATTR_CONTROL), count,
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
    if not header.is_control and count <= len(DATA_MIDS):
        # Fast path for the framing KRaft always writes: a one- or two-byte length, then exactly
        # `DATA_MIDS[i]` (attributes 0, timestampDelta 0, offsetDelta i, null key), a one- or
        # two-byte value length and a zero header count. Anything else goes to `_record`, which
        # parses field by field and names the problem.
        mids = DATA_MIDS
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
