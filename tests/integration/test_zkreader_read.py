"""`read_cluster` against a real ZooKeeper: what was written is what is read (both engines,
bounded windows, 10,000 partitions), chroots, digest auth, unreachable servers, malformed
znodes named by path, and watches that report changes made after the read (design I3)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.connection import _CONNECTION_DROP
from kazoo.security import make_digest_acl

from migrate.cli import main as cli_main
from migrate.cli.exit_codes import exit_code_for
from samples import SampleCase, SampleSpec
from tests.support.malformed import CORPUS, TOPIC, write_malformed
from tests.support.ports import free_ports
from zkreader import (
    BadConnectStringError,
    ChangeEvent,
    ClusterSnapshot,
    ConnectOptions,
    ReadPipeline,
    ReadRequest,
    ReadStats,
    ZkSession,
    ZkUnreachableError,
    ZnodeFormatError,
    open_session,
    read_cluster,
)
from zkreader._znodes import kind_for_path


@pytest.fixture
def session_at(zk_server: Any) -> Iterator[Callable[..., ZkSession]]:
    """Factory: open a zk2kraft session on `zk_server` with a chroot; closed after the test."""
    opened: list[ZkSession] = []

    def make(chroot: str, **options: Any) -> ZkSession:
        s = open_session(ConnectOptions(f"{zk_server.connect}{chroot}", timeout_s=10, **options))
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


def next_event(session: ZkSession, timeout: float = 10.0) -> ChangeEvent:
    event = session.changes.get(timeout=timeout)
    assert event is not None, "no watch notification arrived"
    return event


def check_matches_manifest(snap: ClusterSnapshot, manifest: Any) -> None:
    assert snap.cluster_id is not None and snap.cluster_id.cluster_id == manifest.cluster_id
    assert {b: snap.brokers[b].json_version for b in snap.brokers} == dict(
        manifest.broker_versions)
    assert {t: snap.topics[t].topic_id for t in snap.topics} == dict(manifest.topic_ids)
    assert sum(len(t.assignment) for t in snap.topics.values()) == manifest.partitions_written
    assert len(snap.partition_states) == manifest.state_znodes
    for path, version in manifest.state_versions.items():
        parts = path.split("/")
        assert snap.partition_states[(parts[3], int(parts[5]))].stat.version == version
    for b in snap.brokers.values():
        assert b.stat.ephemeral_owner == manifest.session_id


def test_sample_cluster_reads_back_exactly(sample_cluster: Callable[..., Any],
                                           session_at: Callable[..., ZkSession]) -> None:
    sample = sample_cluster(SampleSpec.everything())
    session = session_at(sample.chroot)
    stats = ReadStats()
    snap = read_cluster(session, stats=stats)
    check_matches_manifest(snap, sample.manifest)
    m = sample.manifest
    assert snap.chroot == sample.chroot
    assert snap.controller is not None and snap.controller_epoch is not None
    assert snap.migration is not None  # the blocker case writes one
    assert [e.name for e in snap.log_dir_events] and snap.pending_deletions
    assert snap.producer_id_block is not None and snap.feature is not None
    assert {a.pattern_type for a in snap.acls} == {"LITERAL", "PREFIXED"}
    assert snap.delegation_tokens and snap.user_client_configs and snap.ip_configs
    assert "<default>" in snap.broker_configs
    missing = m.path(SampleCase.MISSING_PARTITION_STATE).split("/")
    assert (missing[3], int(missing[5])) not in snap.partition_states
    assert stats.reads == session.changes.armed  # one armed watch per read
    assert snap.last_zxid > 0
    # The get_async engine reads the very same snapshot.
    assert read_cluster(session, multi_read=False, watch=False) == snap


def test_ten_thousand_partitions_with_a_bounded_window(
        sample_cluster: Callable[..., Any], session_at: Callable[..., ZkSession]) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=100, partitions_per_topic=100))
    session = session_at(sample.chroot)
    assert sample.manifest.state_znodes == 10_000
    for multi_read, window, batch in ((True, 64, 16), (False, 64, 1)):
        stats = ReadStats()
        seen: list[tuple[int, int]] = []
        snap = read_cluster(session, window=window, batch=batch, multi_read=multi_read,
                            watch=False, stats=stats,
                            progress=lambda d, t, s=seen: s.append((d, t)))
        check_matches_manifest(snap, sample.manifest)
        assert 0 < stats.max_in_flight <= window
        assert stats.reads > 10_000
        assert len(seen) > 10 and seen[-1] == (stats.reads, stats.reads)
        assert all(d <= t for d, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_chroots_are_isolated_and_missing_chroot_is_bad_input(
        sample_cluster: Callable[..., Any], session_at: Callable[..., ZkSession],
        zk_server: Any) -> None:
    a = sample_cluster(SampleSpec.clean(topics=2, seed=1))
    b = sample_cluster(SampleSpec.clean(topics=5, seed=2))
    snap_a = read_cluster(session_at(a.chroot), watch=False)
    snap_b = read_cluster(session_at(b.chroot), watch=False)
    assert set(snap_a.topics) == set(a.manifest.topic_ids)
    assert set(snap_b.topics) == set(b.manifest.topic_ids)
    assert snap_a.cluster_id != snap_b.cluster_id
    with pytest.raises(BadConnectStringError, match="chroot /no_such_chroot_x does not exist"):
        open_session(ConnectOptions(f"{zk_server.connect}/no_such_chroot_x", timeout_s=5))


def test_empty_chroot_is_an_empty_cluster(zk_chroot: str,
                                          session_at: Callable[..., ZkSession]) -> None:
    snap = read_cluster(session_at(zk_chroot))
    assert snap == ClusterSnapshot(chroot=zk_chroot)


def test_unreachable_zookeeper_fails_within_the_timeout() -> None:
    (port,) = free_ports(1)  # nothing listens there
    # how long this takes is measured by benchmarks/timings.py (no timing asserts in tests)
    with pytest.raises(ZkUnreachableError) as info:
        open_session(ConnectOptions(f"127.0.0.1:{port}", timeout_s=2.0))
    assert exit_code_for(info.value) == 3
    assert f"127.0.0.1:{port}" in str(info.value)


def test_digest_acl_tree_needs_the_right_credentials(
        zk_server: Any, zk_chroot: str, session_at: Callable[..., ZkSession]) -> None:
    acl = make_digest_acl("kafka", "s3cret-pw", all=True)
    owner = KazooClient(f"{zk_server.connect}{zk_chroot}",
                        auth_data=[("digest", "kafka:s3cret-pw")])
    owner.start(timeout=10)
    try:
        owner.create("/brokers/topics/t", json.dumps(TOPIC).encode(), acl=[acl], makepath=True)
        owner.set_acls("/brokers/topics", [acl])
        owner.create("/brokers/topics/t/partitions/0/state", json.dumps(
            {"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 1, "isr": [1]}
        ).encode(), acl=[acl], makepath=True)
    finally:
        owner.stop()
        owner.close()
    snap = read_cluster(session_at(zk_chroot, digest="kafka:s3cret-pw"))
    assert snap.topics["t"].topic_id == TOPIC["topic_id"]
    assert snap.partition_states[("t", 0)].leader == 1
    with pytest.raises(ZkUnreachableError, match="not authorized reading /brokers/topics") as info:
        read_cluster(session_at(zk_chroot))
    assert "s3cret" not in str(info.value)
    with pytest.raises(ZkUnreachableError, match="not authorized"):
        read_cluster(session_at(zk_chroot, digest="kafka:wrong"), multi_read=False)


@pytest.mark.parametrize("entry", CORPUS, ids=[e["name"] for e in CORPUS])
def test_malformed_znode_aborts_the_read_naming_the_path(
        entry: dict[str, str], zk_server: Any, zk_chroot: str,
        session_at: Callable[..., ZkSession], capsys: pytest.CaptureFixture[str]) -> None:
    client = KazooClient(f"{zk_server.connect}{zk_chroot}")
    client.start(timeout=10)
    try:
        write_malformed(client, entry)
    finally:
        client.stop()
        client.close()
    assert kind_for_path(entry["path"]) is not None
    with pytest.raises(ZnodeFormatError) as info:
        read_cluster(session_at(zk_chroot))
    assert info.value.path == entry["path"]
    assert entry["problem"] in info.value.problem
    # and the command line turns it into exit 2 with the path on stderr, nothing on stdout
    code = cli_main(["snapshot", "--zookeeper", f"{zk_server.connect}{zk_chroot}", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2
    assert entry["path"] in err and out == ""


def test_changes_after_the_read_reach_the_change_feed(
        sample_cluster: Callable[..., Any], session_at: Callable[..., ZkSession]) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=3))
    session = session_at(sample.chroot)
    read_cluster(session)
    writer = sample.client
    state = "/brokers/topics/topic-00001/partitions/0/state"
    data, _ = writer.get(state)
    writer.set(state, data)
    assert next_event(session) == ChangeEvent(state, "CHANGED")
    writer.create("/brokers/topics/new-topic", json.dumps(TOPIC).encode())
    assert next_event(session) == ChangeEvent("/brokers/topics", "CHILD")
    writer.create("/migration", b'{"version":0}')  # was missing: an exist watch covers it
    assert next_event(session) == ChangeEvent("/migration", "CREATED")
    writer.delete("/config/topics/topic-00000")
    assert next_event(session) == ChangeEvent("/config/topics/topic-00000", "DELETED")
    assert next_event(session) == ChangeEvent("/config/topics", "CHILD")


def test_watches_survive_a_dropped_connection(
        sample_cluster: Callable[..., Any], session_at: Callable[..., ZkSession]) -> None:
    """Kazoo loses server-side watches on reconnect; the feed re-arms them with SetWatches at
    the last zxid seen (so ZooKeeper fires at once for anything changed in between)."""
    sample = sample_cluster(SampleSpec.clean(topics=2))
    session = session_at(sample.chroot)
    read_cluster(session)
    client = session.kazoo
    early = "/brokers/topics/topic-00000/partitions/0/state"
    late = "/brokers/topics/topic-00000/partitions/1/state"
    client._call(_CONNECTION_DROP, client.handler.async_result())
    sample.client.set(early, sample.client.get(early)[0])  # most likely while disconnected
    assert session.changes.wait_rearmed(1, timeout=10), "no reconnect and re-arm within 10s"
    assert next_event(session) == ChangeEvent(early, "CHANGED")
    sample.client.set(late, sample.client.get(late)[0])
    assert next_event(session) == ChangeEvent(late, "CHANGED")


@pytest.mark.parametrize("multi_read", [True, False])
def test_pipeline_keeps_request_order_with_a_tiny_window(
        multi_read: bool, zk_chroot: str, session_at: Callable[..., ZkSession]) -> None:
    session = session_at(zk_chroot)
    client = session.kazoo
    for i in range(0, 40, 2):  # every other znode exists; every 5th request lists children
        client.create(f"/n{i}/c{i}", str(i).encode(), makepath=True)
    requests = [ReadRequest(f"/n{i}", children=i % 5 == 0) for i in range(40)]
    pipeline = ReadPipeline(session, window=3, batch=2, multi_read=multi_read)
    results = list(pipeline.read(requests))
    assert [r.path for r in results] == [q.path for q in requests]
    for i, r in enumerate(results):
        assert r.exists == (i % 2 == 0)
        if r.exists and i % 5 == 0:
            assert r.children == (f"c{i}",)
        elif r.exists:
            assert r.data == b"" and r.stat is not None
    assert pipeline.max_in_flight <= 3
