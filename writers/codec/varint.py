"""Kafka's variable-length integers and the small wire helpers shared by the codec and batches.

Two encodings are in play (Kafka's `ByteUtils`; `DefaultRecord`, `MetadataRecordSerde`):

* unsigned varint (`ByteUtils.writeUnsignedVarint`): plain LEB128, 7 bits per byte, low group
  first. Used by the metadata frame (frame version, apiKey, version) and by every compact
  length in flexible messages (`len + 1`, 0 = null) and tagged-field headers.
* zigzag varint / varlong (`ByteUtils.writeVarint/writeVarlong`): `(n << 1) ^ (n >> 63)` then
  LEB128. Used by the record layout inside a batch (length, deltas, key and value lengths).

Encoders return `bytes`; small values come from precomputed tables because a batch of a
million records spends most of its time on one- and two-byte varints. Decoders thread an offset,
as kazoo's protocol readers do: `read_uvarint(buf, pos) -> (value, new_pos)`, so nothing
re-slices the rest of the buffer.
"""

from __future__ import annotations

__all__ = [
    "VarintError",
    "read_uvarint",
    "read_zigzag",
    "uvarint",
    "zigzag",
    "zigzag_size",
]

_TABLE_SIZE = 1 << 14  # every value below this encodes in at most two bytes


class VarintError(ValueError):
    """A varint runs past the end of the buffer or is longer than its type allows."""

    def __init__(self, pos: int, problem: str) -> None:
        super().__init__(f"{problem} at byte {pos}")
        self.pos = pos
        self.problem = problem


def _uvarint_slow(n: int) -> bytes:
    if n < 0:
        raise ValueError(f"unsigned varint cannot hold {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_UVARINT: tuple[bytes, ...] = tuple(_uvarint_slow(i) for i in range(_TABLE_SIZE))
_ZIGZAG_POS: tuple[bytes, ...] = tuple(_uvarint_slow(i << 1) for i in range(_TABLE_SIZE))
_ZIGZAG_NEG: tuple[bytes, ...] = tuple(
    _uvarint_slow(((-i) << 1) ^ -1) for i in range(1, _TABLE_SIZE + 1)
)


def uvarint(n: int) -> bytes:
    """Encode `n >= 0` as Kafka's unsigned varint.

    Raises:
        ValueError: `n` is negative.
    """
    if 0 <= n < _TABLE_SIZE:
        return _UVARINT[n]
    return _uvarint_slow(n)


def zigzag(n: int) -> bytes:
    """Encode a signed int (varint or varlong; both zigzag the same way) as zigzag LEB128.

    Raises:
        ValueError: `n` does not fit a signed 64-bit integer.
    """
    if 0 <= n < _TABLE_SIZE:
        return _ZIGZAG_POS[n]
    if -_TABLE_SIZE <= n < 0:
        return _ZIGZAG_NEG[-n - 1]
    if not -(1 << 63) <= n < (1 << 63):
        raise ValueError(f"varlong cannot hold {n}")
    return _uvarint_slow((n << 1) ^ (n >> 63))


def zigzag_size(n: int) -> int:
    """Number of bytes `zigzag(n)` takes, without building it."""
    u = (n << 1) ^ (n >> 63)
    size = 1
    while u >= 0x80:
        u >>= 7
        size += 1
    return size


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int, *, max_bytes: int = 5) -> tuple[
    int, int
]:
    """Read an unsigned varint at `pos`.

    Args:
        buf: the bytes.
        pos: where the varint starts.
        max_bytes: 5 for a 32-bit varint (Kafka's `readUnsignedVarint`), 10 for a varlong.

    Returns:
        (value, position after it).

    Raises:
        VarintError: the varint is truncated or longer than `max_bytes`.
    """
    end = len(buf)
    value = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise VarintError(start, "truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if pos - start >= max_bytes:
            raise VarintError(start, f"varint longer than {max_bytes} bytes")


def read_zigzag(buf: bytes | bytearray | memoryview, pos: int, *, max_bytes: int = 5) -> tuple[
    int, int
]:
    """Read a zigzag varint (`max_bytes=5`) or varlong (`max_bytes=10`) at `pos`.

    Returns:
        (value, position after it).

    Raises:
        VarintError: the varint is truncated or too long.
    """
    if pos < len(buf):
        b = buf[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
    u, pos = read_uvarint(buf, pos, max_bytes=max_bytes)
    return (u >> 1) ^ -(u & 1), pos
