"""The two hand-built wire requests (multiRead, SetWatches), byte by byte against ZooKeeper's
jute layouts, and the change feed's bookkeeping. The real-server behaviour is covered by
tests/integration/test_zkreader_read.py."""

from __future__ import annotations

import dataclasses
import struct
import threading
from types import SimpleNamespace

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import UnimplementedError
from kazoo.protocol.states import EventType, KazooState, WatchedEvent

from zkreader import ChangeEvent, ChangeFeed
from zkreader._model import PartitionState, ZnodeStat, new_partition_state, new_stat
from zkreader._watch import CHILD, DATA, EXIST
from zkreader._wire import GET_CHILDREN, GET_DATA, MultiRead, OpError, SetWatches


def jstr(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("!i", len(raw)) + raw


def test_multiread_serializes_like_zookeepers_multi_operation_record() -> None:
    body = MultiRead(None, [(GET_DATA, "/a"), (GET_CHILDREN, "/b")]).serialize()
    expected = (struct.pack("!iBi", 4, 0, -1) + jstr("/a") + b"\x00"
                + struct.pack("!iBi", 8, 0, -1) + jstr("/b") + b"\x00"
                + struct.pack("!iBi", -1, 1, -1))
    assert body == expected
    assert MultiRead.type == 22


def test_multiread_decodes_data_children_errors_and_null_data() -> None:
    stat = struct.pack("!qqqqiiiqiiq", 5, 6, 100, 200, 3, 0, 0, 77, 2, 4, 9)
    reply = (struct.pack("!iBi", 4, 0, 0) + struct.pack("!i", 2) + b"{}" + stat
             + struct.pack("!iBi", 8, 0, 0) + struct.pack("!i", 2) + jstr("x") + jstr("y")
             + struct.pack("!iBi", -1, 0, -101) + struct.pack("!i", -101)
             + struct.pack("!iBi", 4, 0, 0) + struct.pack("!i", -1) + stat
             + struct.pack("!iBi", -1, 1, -1))
    client = SimpleNamespace(last_zxid=42)
    mr = MultiRead(client, [])
    prefix = b"junk"
    results = mr.deserialize(prefix + reply, len(prefix))
    assert mr.zxid == 42
    data, st = results[0]  # type: ignore[misc]
    assert data == b"{}"
    assert (st.czxid, st.mzxid, st.ctime_ms, st.mtime_ms, st.version, st.ephemeral_owner,
            st.num_children) == (5, 6, 100, 200, 3, 77, 4)
    assert results[1] == ["x", "y"]
    assert isinstance(results[2], OpError) and results[2].code == -101
    assert results[3][0] is None  # type: ignore[index]


def test_setwatches_layout() -> None:
    body = SetWatches(99, ["/d"], ["/e1", "/e2"], []).serialize()
    assert body == (struct.pack("!q", 99) + struct.pack("!i", 1) + jstr("/d")
                    + struct.pack("!i", 2) + jstr("/e1") + jstr("/e2") + struct.pack("!i", 0))
    assert SetWatches.type == 101


def event(type_: str, path: str) -> WatchedEvent:
    return WatchedEvent(type_, KazooState.CONNECTED, path)


def test_feed_counts_armed_watches_and_forgets_fired_ones() -> None:
    feed = ChangeFeed()
    feed.mark_armed("/a", DATA)
    feed.mark_armed("/m", EXIST)
    feed.mark_armed("/p", CHILD)
    assert feed.armed == 3 and feed.is_armed("/m")
    feed.watcher(event(EventType.CHANGED, "/a"))
    feed.watcher(event(EventType.CHILD, "/p"))
    assert feed.armed == 1 and not feed.is_armed("/a")
    assert feed.drain() == [ChangeEvent("/a", "CHANGED"), ChangeEvent("/p", "CHILD")]
    assert feed.get(timeout=0) is None
    # the fired ones count as unarmed again, in the order asked
    assert feed.unarmed(["/p", "/m", "/a", "/new"]) == ["/p", "/a", "/new"]


def test_feed_is_fifo_across_threads() -> None:
    feed = ChangeFeed()
    threads = [threading.Thread(target=lambda i=i: feed.notify(f"/n{i}", "CREATED"))
               for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = feed.drain()
    assert sorted(e.path for e in got) == sorted(f"/n{i}" for i in range(50))


def test_feed_ignores_kazoos_connection_drop_signal_and_keeps_its_record() -> None:
    feed = ChangeFeed()
    feed.mark_armed("/a", DATA)
    feed.watcher(WatchedEvent(EventType.NONE, KazooState.SUSPENDED, None))
    assert feed.drain() == [] and feed.is_armed("/a")


def test_multiread_empty_reply_means_an_old_server() -> None:
    """ZooKeeper < 3.6 answers an unknown opcode with a bare header: the pipeline's cue to fall
    back to get_async."""
    with pytest.raises(UnimplementedError):
        MultiRead(SimpleNamespace(last_zxid=1), [(GET_DATA, "/a")]).deserialize(b"hdr", 3)


def test_a_reconnect_invalidates_watches_marked_with_an_older_epoch() -> None:
    """A request that set watches before a reconnect, but whose reply was counted after the
    re-arm, must set them again: mark_armed_all refuses the stale epoch."""
    client = KazooClient(hosts="127.0.0.1:1")  # never started: only its watcher tables are used
    feed = ChangeFeed()
    feed.attach(client)
    feed.mark_armed("/known", DATA)
    before = feed.epoch
    feed._on_state(KazooState.SUSPENDED)
    feed._on_state(KazooState.CONNECTED)
    assert feed.epoch == before + 1 and feed.rearms == 1
    assert feed.watcher in client._data_watchers["/known"]  # re-registered for the re-arm
    assert not feed.mark_armed_all([("/late", DATA)], before)
    assert not feed.is_armed("/late")
    assert feed.mark_armed_all([("/late", DATA)], feed.epoch)
    assert feed.is_armed("/late")
    feed.detach()


def test_fast_constructors_build_the_same_values_as_the_dataclasses() -> None:
    """`new_stat` / `new_partition_state` set slots directly (the reader's hot path); they must
    give values equal to, and as frozen as, the dataclass constructors'."""
    stat = new_stat(1, 2, 3, 4, 5, 6, 7)
    assert stat == ZnodeStat(czxid=1, mzxid=2, version=3, ctime_ms=4, mtime_ms=5,
                             ephemeral_owner=6, num_children=7)
    state = new_partition_state("t", 4, 2, 9, 1, (2, 3), 1, stat)
    assert state == PartitionState(topic="t", partition=4, leader=2, leader_epoch=9,
                                   controller_epoch=1, isr=(2, 3), leader_recovery_state=1,
                                   stat=stat)
    assert hash(state) == hash(PartitionState("t", 4, 2, 9, 1, (2, 3), 1, stat))
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.leader = 3  # type: ignore[misc]
