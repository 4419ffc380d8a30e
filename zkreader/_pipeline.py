"""Pipelined reads with a bounded in-flight window, consumed in issue order.

Two engines, same contract (`ReadPipeline.read(requests)` yields one `ReadResult` per request,
in request order, with at most `window` reads in flight; `ReadPipeline.replies(ops)` is the same
stream without the per-znode request and result objects, for bulk readers such as `read_cluster`):

- **multiRead** (default; ZooKeeper 3.6+): requests are packed `batch` at a time into one
  multiRead request; after each batch one SetWatches at the batch's read zxid arms its watches
  (fires at once for anything changed since). Far less Python per znode than one request each.
- **get_async** (`multi_read=False`, or automatically when the server answers multiRead with
  UNIMPLEMENTED): kazoo's `get_async`/`get_children_async` with the watch on the read itself.

Both keep a FIFO of in-flight requests (kazoo's `_pending` discipline, one level up), retry a
request lost to a connection drop in place (so order is kept), and count a watch as armed only
once the request that set it has returned (design I3). Kazoo's request queue (`_call`) and
watcher tables are private API; they are used only here and in `_watch.py`.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from kazoo.exceptions import (
    EXCEPTIONS,
    ConnectionLoss,
    NoNodeError,
    OperationTimeoutError,
    UnimplementedError,
)
from kazoo.handlers.threading import KazooTimeoutError

from zkreader._model import ZnodeStat
from zkreader._session import ZkSession, map_kazoo_error, to_stat
from zkreader._watch import CHILD, DATA, EXIST, ChangeFeed
from zkreader._wire import GET_CHILDREN, GET_DATA, MultiRead, OpError, SetWatches
from zkreader.errors import ZkUnreachableError

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_WINDOW",
    "GET_CHILDREN",
    "GET_DATA",
    "ReadPipeline",
    "ReadRequest",
    "ReadResult",
    "Reply",
]

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 2048
DEFAULT_BATCH = 256
_NONODE = NoNodeError.code
_RETRYABLE = (ConnectionLoss, OperationTimeoutError)


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """One read: `children=False` reads data+stat, `children=True` lists children."""

    path: str
    children: bool = False


class ReadResult(NamedTuple):
    """The answer to one `ReadRequest`.

    Attributes:
        path: as requested (relative to the chroot).
        data / stat: for data reads of an existing znode.
        children: for children reads of an existing znode.
        exists: False when the znode does not exist (an exist watch was armed instead).
    """

    path: str
    exists: bool
    data: bytes | None = None
    stat: ZnodeStat | None = None
    children: tuple[str, ...] | None = None


Progress = Callable[[int], None]

Reply = tuple[bytes | None, ZnodeStat] | list[str] | None
"""One answer of `ReadPipeline.replies`: (data, stat) for GET_DATA, the children's names for
GET_CHILDREN, None when the znode does not exist."""


class ReadPipeline:
    """Read many znodes with a bounded window; results come back in request order.

    Args:
        session: the ZooKeeper session.
        window: maximum number of reads in flight (>= 1).
        batch: reads per multiRead request (multiRead engine only).
        feed: where watch notifications go; None reads without watches.
        multi_read: use multiRead (falls back to get_async if the server lacks it).
    """

    def __init__(self, session: ZkSession, *, window: int = DEFAULT_WINDOW,
                 batch: int = DEFAULT_BATCH, feed: ChangeFeed | None = None,
                 multi_read: bool = True) -> None:
        if window < 1 or batch < 1:
            raise ValueError("window and batch must be >= 1")
        self.session = session
        self.window = window
        self.batch = min(batch, window)
        self.feed = feed
        self.multi_read = multi_read
        self.reads = 0
        self.max_in_flight = 0

    def read(self, requests: Iterable[ReadRequest]) -> Iterator[ReadResult]:
        """Yield one result per request, in order.

        Raises:
            ZkUnreachableError: the connection stayed down past the session's retry time, the
                session expired, or a read was refused for lack of authorization.
            ZkReaderError: any other ZooKeeper error.
        """
        requests = list(requests)
        ops = [(GET_CHILDREN if r.children else GET_DATA, r.path) for r in requests]
        for req, reply in zip(requests, self.replies(ops), strict=True):
            if reply is None:
                yield ReadResult(path=req.path, exists=False)
            elif req.children:
                yield ReadResult(path=req.path, exists=True,
                                 children=tuple(cast("list[str]", reply)))
            else:
                data, stat = cast("tuple[bytes | None, ZnodeStat]", reply)
                yield ReadResult(path=req.path, exists=True, data=data, stat=stat)

    def replies(self, ops: Sequence[tuple[int, str]]) -> Iterator[Reply]:
        """Yield one `Reply` per op, in order; an op is (GET_DATA | GET_CHILDREN, path).

        The bulk form of `read`: a 100,000-partition read spends less time building request
        and result objects than reading. Watches and errors are as for `read`.

        Raises:
            As `read`.
        """
        if self.multi_read:
            engine = self._read_multi(ops)
            try:
                first = next(engine)
            except StopIteration:
                return
            except _Unimplemented:
                log.info("server has no multiRead (ZooKeeper < 3.6); using get_async")
                self.multi_read = False
                yield from self._replies_async(ops)
                return
            yield first
            yield from engine
        else:
            yield from self._replies_async(ops)

    def _replies_async(self, ops: Sequence[tuple[int, str]]) -> Iterator[Reply]:
        requests = (ReadRequest(path, children=op == GET_CHILDREN) for op, path in ops)
        for result in self._read_async(requests):
            if not result.exists:
                yield None
            elif result.children is not None:
                yield list(result.children)
            else:
                yield result.data, result.stat  # type: ignore[misc]

    # -- multiRead engine -----------------------------------------------------------------
    def _submit(self, request: Any) -> Any:
        client = self.session.kazoo
        result = client.handler.async_result()
        client._call(request, result)
        return result

    def _wait(self, make: Callable[[], Any], result: Any, what: str, *,
              nonode_ok: bool = False) -> Any:
        """Wait for `result`; on connection loss resubmit `make()` until retry time runs out."""
        deadline = time.monotonic() + self.session.retry_s
        attempts = 0
        while True:
            try:
                return result.get(timeout=self.session.retry_s)
            except NoNodeError:
                if not nonode_ok:
                    raise map_kazoo_error(NoNodeError(), what) from None
                return None
            except _RETRYABLE as exc:
                self.session.check_alive()
                if time.monotonic() > deadline:
                    raise map_kazoo_error(exc, what) from exc
                log.debug("connection lost reading %s; retrying", what)
                # Kazoo queues a request made while it reconnects and sends it once connected,
                # so the first resend needs no pause; back off only if it fails again.
                if attempts:
                    time.sleep(min(0.05 * attempts, 1.0))
                attempts += 1
                result = make()
            except UnimplementedError as exc:
                raise _Unimplemented() from exc
            except KazooTimeoutError as exc:
                raise ZkUnreachableError(f"no reply from ZooKeeper reading {what}") from exc
            except Exception as exc:
                raise map_kazoo_error(exc, what) from exc

    def _read_multi(self, ops: Sequence[tuple[int, str]]) -> Iterator[Reply]:
        client = self.session.kazoo
        chroot = self.session.chroot
        batch = self.batch
        max_requests = max(1, self.window // batch)
        in_flight: collections.deque[tuple[int, MultiRead, Any]] = collections.deque()
        arming: collections.deque[_Arming] = collections.deque()
        total = len(ops)
        start = 0
        while True:
            while start < total and len(in_flight) < max_requests:
                chunk = ops[start:start + batch]
                full = [(op, chroot + path) for op, path in chunk] if chroot else list(chunk)
                mr = MultiRead(client, full)
                in_flight.append((start, mr, self._submit(mr)))
                start += len(chunk)
                self.max_in_flight = max(self.max_in_flight, len(in_flight) * batch)
            if not in_flight:
                break
            first, mr, result = in_flight.popleft()

            def again(mr: MultiRead = mr) -> Any:
                return self._submit(mr)

            replies = self._wait(again, result, ops[first][1])
            out = _replies(ops, first, replies)
            if self.feed is not None:
                arming.append(self._arm(ops, first, mr.ops, out, mr.zxid))
                while arming and arming[0].result.ready():
                    self._armed(arming.popleft())
            self.reads += len(out)
            yield from out
        while arming:
            self._armed(arming.popleft())

    def _arm(self, ops: Sequence[tuple[int, str]], first: int, full: list[tuple[int, str]],
             replies: list[Reply], zxid: int) -> _Arming:
        """Send one SetWatches for a batch read at `zxid` (fires at once for later changes).

        `ops[first:]` are the batch's ops as requested, `full` the same with the chroot.
        """
        feed = self.feed
        assert feed is not None
        data: list[str] = []
        exist: list[str] = []
        child: list[str] = []
        armed: list[tuple[str, str]] = []
        for i, reply in enumerate(replies):
            op, path = full[i]
            if reply is None:
                exist.append(path)
                armed.append((ops[first + i][1], EXIST))
            elif op == GET_CHILDREN:
                child.append(path)
                armed.append((ops[first + i][1], CHILD))
            else:
                data.append(path)
                armed.append((ops[first + i][1], DATA))
        request = SetWatches(zxid, data, exist, child)
        epoch = feed.epoch

        def submit() -> Any:
            # Kazoo dispatches a watch event to the callables in these tables; it clears them on
            # a connection loss, so a resubmission registers again.
            client = self.session.kazoo
            watcher = feed.watcher
            data_watchers = client._data_watchers
            for path in data:
                data_watchers[path].add(watcher)
            for path in exist:
                data_watchers[path].add(watcher)
            child_watchers = client._child_watchers
            for path in child:
                child_watchers[path].add(watcher)
            return self._submit(request)

        return _Arming(armed, submit, submit(), epoch)

    def _armed(self, arming: _Arming) -> None:
        """Wait for a SetWatches reply, then count its watches as armed.

        Resent after a connection loss, or when a reconnect happened after it was sent (the
        server then dropped the watches it had just set). Its zxid is the read's, so a resend
        still fires for every change made since the read.
        """
        feed = self.feed
        assert feed is not None
        result = arming.result
        epoch = arming.epoch
        while True:
            self._wait(arming.submit, result, "SetWatches")
            if feed.mark_armed_all(arming.armed, epoch):
                return
            epoch = feed.epoch
            result = arming.submit()

    # -- get_async engine -----------------------------------------------------------------
    def _issue(self, req: ReadRequest) -> Any:
        client = self.session.kazoo
        watch = self.feed.watcher if self.feed is not None else None
        if req.children:
            return client.get_children_async(req.path, watch=watch)
        return client.get_async(req.path, watch=watch)

    def _read_async(self, requests: Iterable[ReadRequest]) -> Iterator[ReadResult]:
        feed = self.feed
        in_flight: collections.deque[tuple[ReadRequest, Any, int]] = collections.deque()
        it = iter(requests)
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < self.window:
                req = next(it, None)
                if req is None:
                    exhausted = True
                    break
                epoch = feed.epoch if feed is not None else 0
                in_flight.append((req, self._issue(req), epoch))
                self.max_in_flight = max(self.max_in_flight, len(in_flight))
            if not in_flight:
                break
            req, result, epoch = in_flight.popleft()
            while True:
                value = self._wait(lambda req=req: self._issue(req),  # type: ignore[misc]
                                   result, req.path, nonode_ok=True)
                out = self._async_result(req, value, epoch)
                if out is not None:
                    break
                # a reconnect dropped the watch this read set: read (and arm) it again
                epoch = feed.epoch if feed is not None else 0
                result = self._issue(req)
            self.reads += 1
            yield out

    def _async_result(self, req: ReadRequest, value: Any, epoch: int) -> ReadResult | None:
        """The result of one get_async read, or None when its watch must be set again."""
        feed = self.feed
        if value is None:
            if feed is not None:
                while True:
                    exists_epoch = feed.epoch
                    stat = self.session.call(
                        lambda: self.session.kazoo.exists_async(req.path, watch=feed.watcher),
                        req.path)
                    kind = EXIST if stat is None else DATA
                    if feed.mark_armed_all([(req.path, kind)], exists_epoch):
                        break
                if stat is not None:  # created between the read and the exists: report it
                    feed.notify(req.path, "CREATED")
            return ReadResult(path=req.path, exists=False)
        if req.children:
            if feed is not None and not feed.mark_armed_all([(req.path, CHILD)], epoch):
                return None
            return ReadResult(path=req.path, exists=True, children=tuple(value))
        data, stat = value
        if feed is not None and not feed.mark_armed_all([(req.path, DATA)], epoch):
            return None
        return ReadResult(path=req.path, exists=True, data=data, stat=to_stat(stat))


@dataclass(slots=True)
class _Arming:
    """A SetWatches in flight: the (path, kind) pairs it arms and how to resend it."""

    armed: list[tuple[str, str]]
    submit: Callable[[], Any]
    result: Any
    epoch: int


class _Unimplemented(Exception):
    """The server does not know multiRead."""


def _replies(ops: Sequence[tuple[int, str]], first: int, replies: list[Any]) -> list[Reply]:
    """A multiRead's per-op answers as `Reply`s: NONODE becomes None, other errors raise."""
    for i, reply in enumerate(replies):
        if type(reply) is OpError:
            if reply.code != _NONODE:
                exc_class = EXCEPTIONS[reply.code]
                raise map_kazoo_error(exc_class(), ops[first + i][1])
            replies[i] = None
    return replies
