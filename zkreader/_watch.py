"""The change feed: every watch notification on a read znode, in arrival order (design I3).

The reader arms a watch on every metadata znode it reads; the feed is the thread-safe queue the
mirror/cutover code drains. It also remembers which paths are armed, because kazoo forgets the
server side of its watches on a reconnect (it never sends SetWatches): when the connection comes
back, the feed re-arms them with one SetWatches at the last zxid the client saw, so a change made
while disconnected still yields a notification (ZooKeeper fires at once for such paths).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooState
from kazoo.protocol.states import WatchedEvent

from zkreader._wire import SetWatches

__all__ = ["ChangeEvent", "ChangeFeed"]

SET_WATCHES_MAX_BYTES = 128 * 1024
"""ZooKeeper's own client (`ClientCnxn.SET_WATCHES_MAX_LENGTH`) splits SetWatches at 128 KiB of
paths: one request for 100k+ watches exceeds the server's `jute.maxbuffer` (1 MiB by default)
and the server drops the connection, so the re-arm after a reconnect would never succeed."""

log = logging.getLogger(__name__)

DATA, EXIST, CHILD = "data", "exist", "child"


@dataclass(frozen=True, slots=True)
class ChangeEvent:
    """One notification: `path` (relative to the chroot) and ZooKeeper's event type.

    Attributes:
        path: the znode that changed.
        type: CREATED, DELETED, CHANGED or CHILD (kazoo's `EventType` names).
        at: when it arrived (monotonic clock), so the mirror can report its lag.
    """

    path: str
    type: str
    at: float = field(default_factory=time.monotonic, compare=False)


class ChangeFeed:
    """Thread-safe FIFO of `ChangeEvent`s plus the set of armed watches.

    A watch counts as armed only once the read (or SetWatches) that set it has returned;
    `armed` is that count. Kazoo calls `watcher` on its callback thread.
    """

    def __init__(self) -> None:
        self._events: queue.SimpleQueue[ChangeEvent] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._armed: dict[str, str] = {}  # relative path -> DATA | EXIST (data-side watches)
        self._armed_children: set[str] = set()
        self._client: Any = None
        self._epoch = 0  # bumped (under _lock) each time the armed set is re-sent on reconnect
        self._suspended = False
        self._rearmed = threading.Condition()
        self.rearms = 0

    # -- kazoo side ------------------------------------------------------------------------
    def watcher(self, event: WatchedEvent) -> None:
        """Kazoo watch callback: record the event and forget the (one-shot) watch.

        Kazoo also calls every watcher with a NONE event (no path) when the connection drops
        and it forgets its watches; the feed keeps its own record and re-arms on reconnect, so
        those are not changes and are not queued.
        """
        if event.type == "NONE" or event.path is None:
            return
        with self._lock:
            if event.type == "CHILD":
                self._armed_children.discard(event.path)
            elif event.type == "DELETED":
                self._armed.pop(event.path, None)
                self._armed_children.discard(event.path)
            else:
                self._armed.pop(event.path, None)
        self._events.put(ChangeEvent(path=event.path, type=str(event.type)))

    def notify(self, path: str, type_: str) -> None:
        """Queue a synthetic event (a znode found to exist after a read reported it missing)."""
        self._events.put(ChangeEvent(path=path, type=type_))

    def mark_armed(self, path: str, kind: str) -> None:
        """Record that a watch of `kind` (data, exist or child) on `path` is set."""
        with self._lock:
            if kind == CHILD:
                self._armed_children.add(path)
            else:
                self._armed[path] = kind

    @property
    def epoch(self) -> int:
        """Connection epoch: how many times the armed watches were re-sent after a reconnect.

        Read it before sending a request that sets watches, and pass it to `mark_armed_all`.
        """
        with self._lock:
            return self._epoch

    def mark_armed_all(self, entries: list[tuple[str, str]], epoch: int) -> bool:
        """Record watches set by a request sent in `epoch`, unless a reconnect intervened.

        A reconnect after the request was sent but before this call loses those watches on the
        server, and the re-arm did not know them yet. Then nothing is recorded and False is
        returned: the caller must set them again (re-sending is always safe).
        """
        with self._lock:
            if epoch != self._epoch:
                return False
            for path, kind in entries:
                if kind == CHILD:
                    self._armed_children.add(path)
                else:
                    self._armed[path] = kind
            return True

    def attach(self, client: Any) -> None:
        """Re-arm this feed's watches whenever `client` reconnects within the same session."""
        self._client = client
        client.add_listener(self._on_state)

    def detach(self) -> None:
        """Stop listening to the client's connection state."""
        if self._client is not None:
            self._client.remove_listener(self._on_state)
            self._client = None

    def _on_state(self, state: str) -> bool:
        if state == KazooState.SUSPENDED:
            self._suspended = True
        elif state == KazooState.CONNECTED and self._suspended:
            self._suspended = False
            self._rearm()
        return False

    def _rearm(self) -> None:
        client = self._client
        if client is None:
            return
        chroot = client.chroot or ""
        with self._lock:
            self._epoch += 1
            data = [chroot + p for p, k in self._armed.items() if k == DATA]
            exist = [chroot + p for p, k in self._armed.items() if k == EXIST]
            child = [chroot + p for p in self._armed_children]
        if not (data or exist or child):
            with self._rearmed:
                self.rearms += 1
                self._rearmed.notify_all()
            return
        for full in data + exist:
            client._data_watchers[full].add(self.watcher)
        for full in child:
            client._child_watchers[full].add(self.watcher)
        zxid = client.last_zxid
        chunks = list(_chunks(data, exist, child))
        log.info("re-arming %d watches after a reconnect (%d SetWatches)",
                 len(data) + len(exist) + len(child), len(chunks))
        for d, e, c in chunks:
            client._call(SetWatches(zxid, d, e, c), client.handler.async_result())
        with self._rearmed:
            self.rearms += 1
            self._rearmed.notify_all()

    def wait_rearmed(self, count: int, timeout: float) -> bool:
        """Wait until the feed has re-armed its watches after `count` reconnects in all.

        Returns:
            False if that had not happened within `timeout` seconds.
        """
        with self._rearmed:
            return self._rearmed.wait_for(lambda: self.rearms >= count, timeout)

    # -- consumer side ---------------------------------------------------------------------
    @property
    def armed(self) -> int:
        """How many watches are currently armed (data, exist and child)."""
        with self._lock:
            return len(self._armed) + len(self._armed_children)

    def is_armed(self, path: str) -> bool:
        """True when a data/exist or child watch on `path` is armed."""
        with self._lock:
            return path in self._armed or path in self._armed_children

    def unarmed(self, paths: Iterable[str]) -> list[str]:
        """The paths with neither a data/exist nor a child watch armed, in order (one lock
        for the lot: `changed_entities` asks this of every child of a re-listed list)."""
        with self._lock:
            armed, children = self._armed, self._armed_children
            return [p for p in paths if p not in armed and p not in children]

    def get(self, timeout: float | None = None) -> ChangeEvent | None:
        """The next notification, waiting up to `timeout` seconds (None: forever)."""
        try:
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> list[ChangeEvent]:
        """Every notification queued so far, oldest first, without waiting."""
        out = []
        while True:
            try:
                out.append(self._events.get_nowait())
            except queue.Empty:
                return out


def _chunks(data: list[str], exist: list[str], child: list[str]
            ) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Split the three watch lists into SetWatches requests of at most 128 KiB of paths each."""
    out: tuple[list[str], list[str], list[str]] = ([], [], [])
    size = 0
    for kind, paths in enumerate((data, exist, child)):
        for path in paths:
            n = len(path.encode()) + 4
            if size + n > SET_WATCHES_MAX_BYTES and size:
                yield out
                out, size = ([], [], []), 0
            out[kind].append(path)
            size += n
    if size:
        yield out
