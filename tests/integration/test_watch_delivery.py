"""A notification that came before a reply reaches the change feed only once kazoo's callback
thread ran it: `ZkSession.run_queued_watch_callbacks`, which the online drain calls after its
`sync()`: without it the drain can read the feed while a notification still waits in kazoo's
callback queue and never re-read that entity (a churn run at load 70 on 2 cores once ended with
the log one ISR change behind ZooKeeper, which this race explains)."""

from __future__ import annotations

import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import Callback

from zkreader import session_for_client


def test_a_notification_queued_behind_a_busy_callback_thread_is_delivered_before_the_drain(
    zk_chroot_client: KazooClient,
) -> None:
    client = zk_chroot_client
    client.create("/n", b"a")
    session = session_for_client(client)
    feed = session.changes
    client.get("/n", watch=feed.watcher)
    # Hold kazoo's callback thread, as a host with no CPU to spare can.
    held, release = threading.Event(), threading.Event()

    def busy() -> None:
        held.set()
        release.wait(30)

    client.handler.dispatch_callback(Callback("watch", busy, ()))
    assert held.wait(10)
    client.set("/n", b"b")  # its notification comes before the reply, on the same connection
    client.sync("/")
    assert feed.drain() == []  # the reply is in, the notification still queued
    threading.Timer(0.5, release.set).start()
    session.run_queued_watch_callbacks()
    assert [(e.path, e.type) for e in feed.drain()] == [("/n", "CHANGED")]
