"""A connection dropped in the middle of `read_cluster` (kazoo's own test hook, against the real
server): reads lost in flight are re-sent in place, the snapshot is still exactly what was
written, and every znode read still has its watch (design I3), for both read engines."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.protocol.connection import _CONNECTION_DROP

from samples import SampleSpec
from zkreader import ChangeEvent, ConnectOptions, ReadStats, ZkSession, open_session, read_cluster


@pytest.fixture
def sample_session(sample_cluster: Callable[..., Any],
                   zk_server: Any) -> Iterator[tuple[Any, ZkSession]]:
    sample = sample_cluster(SampleSpec.clean(topics=30, partitions_per_topic=100))
    with open_session(ConnectOptions(sample.connect, timeout_s=15)) as session:
        yield sample, session


@pytest.mark.parametrize("multi_read", [True, False])
def test_read_survives_a_dropped_connection_with_all_watches(
        multi_read: bool, sample_session: tuple[Any, ZkSession]) -> None:
    sample, session = sample_session
    client = session.kazoo
    dropped: list[int] = []

    def drop_once(done: int, total: int) -> None:
        if not dropped and done >= 1000:
            dropped.append(done)
            client._call(_CONNECTION_DROP, client.handler.async_result())

    stats = ReadStats()
    snap = read_cluster(session, window=256, batch=32, multi_read=multi_read, stats=stats,
                        progress=drop_once)
    assert dropped, "the read never reached the drop point"
    assert session.changes.wait_rearmed(1, timeout=15), "the session never reconnected"
    assert len(snap.partition_states) == sample.manifest.state_znodes == 3000
    assert {t: snap.topics[t].topic_id for t in snap.topics} == dict(sample.manifest.topic_ids)
    assert session.changes.armed == stats.reads  # no watch lost to the drop
    early = "/brokers/topics/topic-00000/partitions/0/state"  # read before the drop
    sample.client.set(early, sample.client.get(early)[0])
    seen = [session.changes.get(timeout=10) for _ in range(1)]
    assert seen == [ChangeEvent(early, "CHANGED")]
