"""Two ZooKeeper wire requests kazoo has no call for: multiRead (22) and SetWatches (101).

Shaped like kazoo's own protocol types (`kazoo.protocol.serialization`): a `type` opcode, a
`serialize()` returning the body, and a `deserialize(buf, offset)` that kazoo's connection calls
on its I/O thread when the reply arrives, in request order. They are submitted through kazoo's
request queue, so framing, xids and ordering stay kazoo's.

- `MultiRead` (ZooKeeper 3.6+) carries many getData/getChildren ops in one request and one
  reply, which removes most of kazoo's per-request Python overhead. The server ignores watch
  flags inside a multiRead, so watches are armed separately:
- `SetWatches` is what ZooKeeper's Java client sends after a reconnect: for each path it either
  arms a watch or, if the znode changed after `relative_zxid` (the zxid the data was read at),
  fires the event at once. A read then a SetWatches at the read's zxid therefore misses no change
  (design I3). Kazoo itself never sends it, not even after a reconnect.
"""

from __future__ import annotations

import struct
from typing import Any

from kazoo.exceptions import UnimplementedError

from zkreader._model import ZnodeStat, new_stat

__all__ = ["GET_CHILDREN", "GET_DATA", "MultiRead", "OpError", "SetWatches"]

GET_DATA = 4
GET_CHILDREN = 8

_INT = struct.Struct("!i")
_LONG = struct.Struct("!q")
_MULTI_HEADER = struct.Struct("!iBi")  # type, done, err
_DATA_HEADER = struct.Struct("!iBii")  # type, done, err, then a getData reply's data length
_STAT = struct.Struct("!qqqqiiiqiiq")
_DONE = _MULTI_HEADER.pack(-1, 1, -1)
_OP_HEADER = {op: _MULTI_HEADER.pack(op, 0, -1) for op in (GET_DATA, GET_CHILDREN)}
_NO_WATCH = b"\x00"  # watch flag; ignored by the server inside a multiRead


class OpError:
    """One op of a multiRead failed with ZooKeeper error `code` (e.g. -101 NONODE)."""

    __slots__ = ("code",)

    def __init__(self, code: int) -> None:
        self.code = code

    def __repr__(self) -> str:
        return f"OpError({self.code})"


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return _INT.pack(len(raw)) + raw


MultiReadResult = tuple[bytes | None, ZnodeStat] | list[str] | OpError


class MultiRead:
    """ZooKeeper's multiRead: `ops` is a list of (GET_DATA | GET_CHILDREN, full path).

    After the reply, `zxid` holds the zxid the server read at (the reply header's zxid).
    """

    type = 22
    __slots__ = ("client", "ops", "zxid")

    def __init__(self, client: Any, ops: list[tuple[int, str]]) -> None:
        self.client = client
        self.ops = ops
        self.zxid = 0

    def serialize(self) -> bytes:
        headers = _OP_HEADER
        pack_int = _INT.pack
        parts: list[bytes] = []
        for op, path in self.ops:
            raw = path.encode("utf-8")
            parts += (headers[op], pack_int(len(raw)), raw, _NO_WATCH)
        parts.append(_DONE)
        return b"".join(parts)

    def deserialize(self, buf: Any, offset: int) -> list[MultiReadResult]:
        # Runs on kazoo's I/O thread right after it stored the header's zxid.
        self.zxid = self.client.last_zxid
        if offset >= len(buf):
            # ZooKeeper < 3.6 does not know opcode 22 and answers with an empty body; the
            # pipeline then falls back to get_async.
            raise UnimplementedError()
        # The hot loop of a bulk read (one pass per znode): locals only, one unpack for a getData
        # op's header and data length, the stat built positionally (`new_stat`).
        results: list[MultiReadResult] = []
        append = results.append
        unpack_header = _MULTI_HEADER.unpack_from
        unpack_data_header = _DATA_HEADER.unpack_from
        unpack_int = _INT.unpack_from
        unpack_stat = _STAT.unpack_from
        make_stat = new_stat
        end = len(buf)
        while True:
            if offset + 13 <= end:
                op, done, err, length = unpack_data_header(buf, offset)
            else:  # only the 9-byte done marker fits
                op, done, err = unpack_header(buf, offset)
            if done:
                return results
            if op == GET_DATA:
                offset += 13
                if length < 0:
                    data = None
                else:
                    data = bytes(buf[offset:offset + length])
                    offset += length
                (czxid, mzxid, ctime, mtime, version, _cversion, _aversion, owner, _dlen,
                 children, _pzxid) = unpack_stat(buf, offset)
                offset += 68
                append((data, make_stat(czxid, mzxid, version, ctime, mtime, owner, children)))
            elif op == GET_CHILDREN:
                (count,) = unpack_int(buf, offset + 9)
                offset += 13
                names = []
                for _ in range(max(count, 0)):
                    (length,) = unpack_int(buf, offset)
                    offset += 4
                    names.append(bytes(buf[offset:offset + length]).decode("utf-8"))
                    offset += length
                append(names)
            elif op == -1:
                (code,) = unpack_int(buf, offset + 9)
                offset += 13
                append(OpError(code))
            else:
                raise ValueError(f"multiRead reply holds unexpected op type {op}")

    def __repr__(self) -> str:
        return f"MultiRead({len(self.ops)} ops)"


class SetWatches:
    """ZooKeeper's SetWatches (opcode 101): arm data, exist and child watches in bulk.

    Paths are full server paths (chroot included). The reply has no body.
    """

    type = 101
    __slots__ = ("child_watches", "data_watches", "exist_watches", "relative_zxid")

    def __init__(self, relative_zxid: int, data_watches: list[str], exist_watches: list[str],
                 child_watches: list[str]) -> None:
        self.relative_zxid = relative_zxid
        self.data_watches = data_watches
        self.exist_watches = exist_watches
        self.child_watches = child_watches

    def serialize(self) -> bytes:
        parts = [_LONG.pack(self.relative_zxid)]
        for paths in (self.data_watches, self.exist_watches, self.child_watches):
            parts.append(_INT.pack(len(paths)))
            parts.extend(_string(p) for p in paths)
        return b"".join(parts)

    def deserialize(self, buf: Any, offset: int) -> bool:
        return True

    def __repr__(self) -> str:
        return (f"SetWatches(zxid={self.relative_zxid}, data={len(self.data_watches)}, "
                f"exist={len(self.exist_watches)}, child={len(self.child_watches)})")
