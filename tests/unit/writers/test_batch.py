"""Record batches v2: byte-for-byte against kafka-python's independent builder, strict decoding,
corruption that names where, and the 8 MiB / record-count split."""

from __future__ import annotations

import struct
import warnings

import crc32c
import pytest

from writers import (
    MAX_BATCH_BYTES,
    BatchTooLargeError,
    ControlRecord,
    LogCorruptionError,
    MetadataRecord,
    RecordBatch,
    WriterError,
    batch_records,
    decode_batch,
    encode_batch,
    encode_control_record,
    encode_record,
    iter_batches,
    pack_batch,
    pack_batches,
    read_batch_header,
)

with warnings.catch_warnings():  # kafka-python's package import uses deprecated importlib APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka.record.default_records import DefaultRecordBatchBuilder

U1 = "AAAAAAAAAAAAAAAAAAAAAQ"


def topic(i: int, name_len: int = 5) -> MetadataRecord:
    return MetadataRecord("TOPIC_RECORD", 0, {"name": f"{i:0{name_len}d}", "topicId": U1})


def kafka_python_batch(base_offset: int, epoch: int, ts: int, values: list[bytes],
                       keys: list[bytes | None] | None = None, control: bool = False) -> bytes:
    """The same batch built by kafka-python, with the fields it does not set patched in: base
    offset and partitionLeaderEpoch (outside the CRC) and, for control batches, attribute 0x20
    (inside it, so the CRC is recomputed)."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=0,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 30)
    for i, value in enumerate(values):
        key = None if keys is None else keys[i]
        assert builder.append(i, timestamp=ts, key=key, value=value, headers=[]) is not None
    out = bytearray(builder.build())
    struct.pack_into(">q", out, 0, base_offset)
    struct.pack_into(">i", out, 12, epoch)
    if control:
        struct.pack_into(">h", out, 21, 0x20)
        struct.pack_into(">I", out, 17, crc32c.crc32c(bytes(out[21:])))
    return bytes(out)


@pytest.mark.parametrize(("count", "name_len"), [(1, 1), (2, 5), (64, 5), (300, 100),
                                                 (5, 9000), (20000, 3)])
def test_data_batches_match_kafka_python_byte_for_byte(count: int, name_len: int) -> None:
    records = tuple(topic(i, name_len) for i in range(count))
    batch = RecordBatch(1234567, 7, 1700000000123, records)
    ours = encode_batch(batch)
    theirs = kafka_python_batch(1234567, 7, 1700000000123, [encode_record(r) for r in records])
    assert ours == theirs
    assert decode_batch(ours, 0) == (batch, len(ours))


def test_control_batch_matches_kafka_python() -> None:
    records = (ControlRecord("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 5}),
               ControlRecord("KRAFT_VERSION", {"version": 0, "kRaftVersion": 1}))
    pairs = [encode_control_record(r) for r in records]
    ours = encode_batch(RecordBatch(0, 3, 99, records))
    theirs = kafka_python_batch(0, 3, 99, [v for _, v in pairs], [k for k, _ in pairs],
                                control=True)
    assert ours == theirs
    header = read_batch_header(ours, 0)
    assert header.is_control and header.records_count == 2 and header.leader_epoch == 3
    assert decode_batch(ours, 0)[0].records == records


def test_header_fields() -> None:
    raw = encode_batch(RecordBatch(10, 2, 1000, (topic(1), topic(2), topic(3))))
    header = read_batch_header(raw, 0)
    assert (header.base_offset, header.last_offset, header.size, header.timestamp_ms) == (
        10, 12, len(raw), 1000)
    assert raw[21:23] == b"\x00\x00"  # data batch attributes
    assert raw[43:61] == b"\xff" * 14 + b"\x00\x00\x00\x03"  # producer -1/-1/-1, 3 records


def test_encode_rejects_empty_and_mixed_batches() -> None:
    with pytest.raises(WriterError, match="no records"):
        encode_batch(RecordBatch(0, 0, 0, ()))
    footer = ControlRecord("SNAPSHOT_FOOTER", {"version": 0})
    with pytest.raises(WriterError, match="mixes"):
        encode_batch(RecordBatch(0, 0, 0, (topic(1), footer)))
    with pytest.raises(WriterError, match="mixes"):
        encode_batch(RecordBatch(0, 0, 0, (footer, topic(1))))


# ----------------------------------------------------------------------------- limits, splitting


def test_batch_over_8_mib_is_refused() -> None:
    values = [b"\x01\x14\x00\x00" + b"\x00" * (1 << 20) for _ in range(8)]
    with pytest.raises(BatchTooLargeError, match="more than KRaft's 8388608"):
        pack_batch(0, 0, 0, values)


def test_pack_batches_respects_both_limits_and_keeps_offsets_contiguous() -> None:
    values = [encode_record(topic(i, 1 + (i * 37) % 3000)) for i in range(2000)]
    batches = pack_batches(100, 1, 5, values, max_records=300, max_bytes=200_000)
    expected_offset = 100
    decoded_values = 0
    for raw in batches:
        assert len(raw) <= 200_000
        batch, end = decode_batch(raw, 0)
        assert end == len(raw)
        assert batch.base_offset == expected_offset
        assert 1 <= len(batch.records) <= 300
        for record in batch.records:
            assert encode_record(record) == values[decoded_values]  # type: ignore[arg-type]
            decoded_values += 1
        expected_offset = batch.last_offset + 1
    assert decoded_values == 2000
    # the size limit, not the count, decided at least one split
    assert any(len(decode_batch(b, 0)[0].records) < 300 for b in batches[:-1])


def test_pack_batches_fills_up_to_exactly_max_bytes() -> None:
    values = [encode_record(topic(i)) for i in range(10)]
    one = pack_batch(0, 0, 0, values)
    assert pack_batches(0, 0, 0, values, max_bytes=len(one)) == [one]
    assert len(pack_batches(0, 0, 0, values, max_bytes=len(one) - 1)) == 2


def test_a_record_that_cannot_fit_is_an_error() -> None:
    with pytest.raises(BatchTooLargeError, match="offset 7"):
        pack_batches(7, 0, 0, [b"\x01" * 1000], max_bytes=500)


def test_batch_records_separates_control_and_data() -> None:
    header = ControlRecord("SNAPSHOT_HEADER", {"version": 0, "lastContainedLogTimestamp": 0})
    footer = ControlRecord("SNAPSHOT_FOOTER", {"version": 0})
    records = [header, *[topic(i) for i in range(25)], footer]
    out = batch_records(records, base_offset=0, leader_epoch=4, timestamp_ms=0, max_records=10)
    assert [len(b.records) for b, _ in out] == [1, 10, 10, 5, 1]
    assert [b.base_offset for b, _ in out] == [0, 1, 11, 21, 26]
    assert [b.is_control for b, _ in out] == [True, False, False, False, True]
    for batch, raw in out:
        assert decode_batch(raw, 0) == (batch, len(raw))
        assert encode_batch(batch) == raw


def test_default_limits_allow_a_full_8_mib_batch() -> None:
    value = b"\x01\x14\x00\x00" + b"\x00" * 1000
    batches = pack_batches(0, 0, 0, [value] * 20000)
    assert len(batches) == 3  # 10,000 records each would be ~10 MB: the byte limit splits
    assert all(len(b) <= MAX_BATCH_BYTES for b in batches)


# ----------------------------------------------------------------------------- corruption


def two_batches() -> tuple[bytes, int]:
    first = encode_batch(RecordBatch(0, 1, 0, (topic(1), topic(2))))
    second = encode_batch(RecordBatch(2, 1, 0, (topic(3),)))
    return first + second, len(first)


def test_iter_batches_walks_a_segment() -> None:
    buf, first_len = two_batches()
    got = list(iter_batches(buf, file="seg.log"))
    assert [(pos, b.base_offset, len(b.records)) for pos, b in got] == [
        (0, 0, 2), (first_len, 2, 1)]


def test_every_flipped_byte_inside_the_crc_is_caught() -> None:
    buf, first_len = two_batches()
    for i in range(21, first_len):
        bad = bytearray(buf)
        bad[i] ^= 0x40
        with pytest.raises(LogCorruptionError) as info:
            list(iter_batches(bytes(bad), file="seg.log"))
        assert info.value.file == "seg.log" and info.value.position == 0
        assert "CRC-32C mismatch" in info.value.problem


def test_flip_in_second_batch_names_its_position_after_yielding_the_first() -> None:
    buf, first_len = two_batches()
    bad = bytearray(buf)
    bad[-3] ^= 0x01
    seen = []
    with pytest.raises(LogCorruptionError) as info:
        for pos, _batch in iter_batches(bytes(bad), file="x.log"):
            seen.append(pos)
    assert seen == [0]
    assert info.value.position == first_len and info.value.offset == 2
    assert f"x.log at byte {first_len} (offset 2)" in str(info.value)


def test_leader_epoch_is_outside_the_crc() -> None:
    raw = bytearray(encode_batch(RecordBatch(0, 1, 0, (topic(1),))))
    raw[15] = 9  # Kafka's CRC starts at attributes; the epoch is not covered
    assert decode_batch(bytes(raw), 0)[0].leader_epoch == 9


@pytest.mark.parametrize("cut", [1, 11, 12, 60, 61, 70])
def test_truncated_tail_is_an_error_not_a_skip(cut: int) -> None:
    buf, first_len = two_batches()
    truncated = buf[: first_len + cut]
    with pytest.raises(LogCorruptionError, match="truncated batch") as info:
        list(iter_batches(truncated, file="t.log"))
    assert info.value.position == first_len


def test_bad_magic() -> None:
    raw = bytearray(encode_batch(RecordBatch(0, 0, 0, (topic(1),))))
    raw[16] = 1
    with pytest.raises(LogCorruptionError, match="magic 1, expected 2"):
        decode_batch(bytes(raw), 0)


def test_batch_length_smaller_than_a_header() -> None:
    raw = bytearray(encode_batch(RecordBatch(0, 0, 0, (topic(1),))))
    struct.pack_into(">i", raw, 8, 10)
    with pytest.raises(LogCorruptionError, match="smaller than a batch header"):
        decode_batch(bytes(raw), 0)


def reseal(raw: bytearray) -> bytes:
    """Fix batchLength and CRC after an edit, so only the structural check can fail."""
    struct.pack_into(">i", raw, 8, len(raw) - 12)
    struct.pack_into(">I", raw, 17, crc32c.crc32c(bytes(raw[21:])))
    return bytes(raw)


def build(records_body: bytes, count: int, attributes: int = 0, **header: int) -> bytes:
    fields = {"producer_id": -1, "producer_epoch": -1, "base_sequence": -1, "max_ts": 0,
              "last_delta": count - 1, **header}
    raw = bytearray(struct.pack(
        ">qiibIhiqqqhii", 5, 0, 0, 2, 0, attributes, fields["last_delta"], 0, fields["max_ts"],
        fields["producer_id"], fields["producer_epoch"], fields["base_sequence"], count))
    raw += records_body
    return reseal(raw)


NOOP = bytes.fromhex("01140000")


def rec(body: bytes) -> bytes:
    return bytes([len(body) * 2]) + body  # zigzag length (< 64 bytes)


@pytest.mark.parametrize(("body", "count", "kwargs", "message"), [
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {}, None),
    (rec(b"\x00\x02\x00\x01\x08" + NOOP + b"\x00"), 1, {}, "timestampDelta 1"),
    (rec(b"\x00\x00\x02\x01\x08" + NOOP + b"\x00"), 1, {}, "offsetDelta 1, expected 0"),
    (rec(b"\x00\x00\x00\x02\x00\x08" + NOOP + b"\x00"), 1, {}, "key length 1"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x02"), 1, {}, "1 header(s)"),
    (rec(b"\x00\x00\x00\x01\x00\x00"), 1, {}, "value length 0"),
    (rec(b"\x00\x00\x00\x01\x0a" + NOOP + b"\x00\x00"), 1, {},
     "found 1 byte(s) of garbage after the record"),
    (rec(b"\x00\x00\x00\x01\x08" + bytes.fromhex("01630000") + b"\x00"), 1, {},
     "unknown metadata record apiKey 99"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 2, {}, "ends after 1 of its 2 records"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00") + b"\x00", 1, {},
     "1 byte(s) after the last record"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"last_delta": 3},
     "recordsCount 1 does not match lastOffsetDelta 3"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"producer_id": 7},
     "producerId/epoch/baseSequence 7/-1/-1"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"max_ts": 1},
     "baseTimestamp 0 differs from maxTimestamp 1"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"attributes": 0x10},
     "attributes 0x0010"),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"attributes": 0x01},
     "attributes 0x0001"),
    (rec(b"\x00\x00\x00\x08\x00\x00\x00\x04\x06\x00\x00\x00\x00"), 1, {"attributes": 0x20}, None),
    (rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00"), 1, {"attributes": 0x20},
     "control record key length -1, expected 4"),
    (rec(b"\x00\x00\x00\x08\x00\x00\x00\x01\x06\x00\x00\x00\x00"), 1, {"attributes": 0x20},
     "unknown control record type 1"),
])
def test_structural_rules(body: bytes, count: int, kwargs: dict[str, int],
                          message: str | None) -> None:
    attributes = kwargs.pop("attributes", 0)
    raw = build(body, count, attributes, **kwargs)
    if message is None:
        batch, end = decode_batch(raw, 0)
        assert end == len(raw) and len(batch.records) == 1
        return
    with pytest.raises(LogCorruptionError) as info:
        decode_batch(raw, 0, file="f.log")
    assert message in info.value.problem
    assert info.value.file == "f.log" and info.value.position == 0
    assert info.value.offset == 5 + count - 1


def test_record_error_names_the_record_offset_and_byte() -> None:
    good = rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00")
    bad = rec(b"\x00\x00\x02\x01\x08" + bytes.fromhex("01630000") + b"\x00")
    raw = build(good + bad, 2)
    with pytest.raises(LogCorruptionError) as info:
        decode_batch(raw, 0)
    assert info.value.offset == 6
    # the bad record starts at 61 + len(good): length, attributes, timestampDelta, offsetDelta,
    # key length, value length, then the value's frame byte and, at +7, its apiKey
    assert f"record at byte {61 + len(good) + 7}: unknown metadata record apiKey 99" in str(
        info.value)


def test_nonzero_record_attributes_are_accepted_like_kafka_does() -> None:
    # attributes are unused and ignored by Kafka's readers: the strict fast path hands this
    # record to the field-by-field parser, which accepts it
    first = rec(b"\x00\x00\x00\x01\x08" + NOOP + b"\x00")
    second = rec(b"\x05\x00\x02\x01\x08" + NOOP + b"\x00")
    batch, end = decode_batch(build(first + second, 2), 0)
    assert [r.type for r in batch.records] == ["NO_OP_RECORD", "NO_OP_RECORD"]


@pytest.mark.parametrize("value_len", [63, 64, 8191, 8192, 20000])
def test_value_length_varint_widths(value_len: int) -> None:
    # a TopicRecord value is 3 frame bytes, compact name, 16-byte id, tags: about value_len bytes,
    # so its zigzag length takes 1, 2 or 3 bytes
    record = MetadataRecord("TOPIC_RECORD", 0, {"name": "x" * (value_len - 21), "topicId": U1})
    raw = encode_batch(RecordBatch(0, 0, 0, (record, record)))
    assert decode_batch(raw, 0)[0].records == (record, record)
