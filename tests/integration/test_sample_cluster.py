"""The sample generator against a real ZooKeeper: it writes exactly what its manifest says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from kazoo.client import KazooClient

from samples import SampleCase, SampleSpec, generate_sample_cluster
from samples._cluster import CONTROLLER_EPOCH, TOP_LEVEL_PATHS
from tests.support.ports import free_ports
from tests.support.zk import ZkServer, expire_session

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _json(client: KazooClient, path: str) -> tuple[Any, Any]:
    data, stat = client.get(path)
    return orjson.loads(data), stat


def _all_states(client: KazooClient) -> dict[str, int]:
    """Every partition state znode under /brokers/topics -> its znode version."""
    out: dict[str, int] = {}
    for t in client.get_children("/brokers/topics"):
        base = f"/brokers/topics/{t}/partitions"
        for p in client.get_children(base):
            stat = client.exists(f"{base}/{p}/state")
            if stat is not None:
                out[f"{base}/{p}/state"] = stat.version
    return out


def test_everything_tree_matches_the_manifest(sample_cluster: Callable[..., Any]) -> None:
    sc = sample_cluster(SampleSpec.everything(topics=6, partitions_per_topic=4))
    m, c = sc.manifest, sc.client
    assert m.session_id == c.client_id[0]

    for path in TOP_LEVEL_PATHS:
        assert c.exists(path) is not None, path

    # brokers: ephemeral, owned by the generating session, JSON shape per version
    assert sorted(c.get_children("/brokers/ids")) == sorted(str(b) for b in m.broker_versions)
    assert sorted(set(m.broker_versions.values())) == [2, 4, 5]
    for b, version in m.broker_versions.items():
        body, stat = _json(c, f"/brokers/ids/{b}")
        assert stat.ephemeralOwner == m.session_id
        assert body["version"] == version
        assert isinstance(body["timestamp"], str) and body["endpoints"]
        assert ("listener_security_protocol_map" in body) == (version >= 4)
        assert ("features" in body) == (version >= 5)

    # a KRaft controller's persistent claim, and the epoch bumped CONTROLLER_EPOCH times
    body, stat = _json(c, "/controller")
    assert stat.ephemeralOwner == 0 and body["kraftControllerEpoch"] > 0
    data, stat = c.get("/controller_epoch")
    assert data == str(CONTROLLER_EPOCH).encode() and stat.version == CONTROLLER_EPOCH

    body, _ = _json(c, "/cluster/id")
    assert body == {"version": "1", "id": m.cluster_id}
    body, _ = _json(c, "/feature")
    assert body["version"] == 2 and body["status"] == 1

    # topics: v3 with the manifest's id; the legacy topic v2 without one
    assert sorted(c.get_children("/brokers/topics")) == sorted(m.topic_ids)
    for name, topic_id in m.topic_ids.items():
        body, _ = _json(c, f"/brokers/topics/{name}")
        assert body.get("topic_id") == topic_id
        assert body["version"] == (3 if topic_id else 2)
        assert set(body) >= {"partitions", "adding_replicas", "removing_replicas"}
    assert m.path(SampleCase.TOPIC_WITHOUT_ID) == "/brokers/topics/legacy-no-topic-id"

    # partition states: versions exactly as promised, real epochs > 0 for some
    states = _all_states(c)
    assert len(states) == m.state_znodes
    assert m.state_versions and all(v > 0 for v in m.state_versions.values())
    for path, version in states.items():
        assert version == m.state_versions.get(path, 0), path
    assert sum(1 for v in states.values() if v > 0) == len(m.state_versions)

    # each problem case sits where the manifest says
    assert c.exists(m.path(SampleCase.MISSING_PARTITION_STATE)) is None
    assert c.exists(m.path(SampleCase.MISSING_PARTITION_STATE).rsplit("/", 1)[0]) is not None
    body, _ = _json(c, m.path(SampleCase.OFFLINE_PARTITION))
    assert body["leader"] == -1
    body, _ = _json(c, m.path(SampleCase.RECOVERING_PARTITION))
    assert body["leader_recovery_state"] == 1
    body, _ = _json(c, m.path(SampleCase.LEADER_NOT_IN_ISR))
    assert body["leader"] not in body["isr"]
    edge, _ = _json(c, m.path(SampleCase.IN_FLIGHT_REASSIGNMENT))
    assert edge["adding_replicas"] and edge["removing_replicas"]
    registered = {int(b) for b in c.get_children("/brokers/ids")}
    assigned = {r for reps in edge["partitions"].values() for r in reps}
    assert assigned - registered == {999}
    state_path = m.path(SampleCase.ISR_OUTSIDE_REPLICAS)
    body, _ = _json(c, state_path)
    p = state_path.split("/")[-2]
    assert set(body["isr"]) - set(edge["partitions"][p])
    assert c.get_children("/admin/delete_topics") == ["being-deleted"]
    assert re.fullmatch(r"/log_dir_event_notification/log_dir_event_\d{10}",
                        m.path(SampleCase.LOG_DIR_EVENT))
    body, _ = _json(c, m.path(SampleCase.LOG_DIR_EVENT))
    assert body == {"version": 1, "broker": m.brokers, "event": 1}
    body, _ = _json(c, "/migration")
    assert body["version"] == 0

    assert m.partitions_to_migrate == m.partitions_written - 2
    assert m.topics == len(m.topic_ids)

    # change notifications: sequential znodes exactly where the manifest predicted them
    assert m.notifications
    for path in m.notifications:
        data, _ = c.get(path)
        if path.startswith("/config/changes/"):
            body = orjson.loads(data)
            assert body["version"] == 2 and c.exists(f"/config/{body['entity_path']}")
    assert len(c.get_children("/config/changes")) == sum(
        1 for p in m.notifications if p.startswith("/config/changes/"))


def test_clean_tree_entities(sample_cluster: Callable[..., Any]) -> None:
    sc = sample_cluster(SampleSpec.clean())
    m, c = sc.manifest, sc.client
    body, stat = _json(c, "/controller")
    assert stat.ephemeralOwner == m.session_id and body["kraftControllerEpoch"] == -1
    assert c.exists("/migration") is None
    assert c.get_children("/log_dir_event_notification") == []
    assert c.get_children("/admin/delete_topics") == []
    scram = re.compile(r"salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]+,"
                       r"server_key=[A-Za-z0-9+/=]+,iterations=4096")
    body, _ = _json(c, "/config/users/alice%40example.com")
    assert body["config"]["producer_byte_rate"] == "1048576"
    assert scram.fullmatch(body["config"]["SCRAM-SHA-256"])
    assert scram.fullmatch(body["config"]["SCRAM-SHA-512"])
    for secret in m.secrets:
        assert secret in str(body) or secret in str(_json(c, "/config/users/bob")[0])
    for case in (SampleCase.CLIENT_QUOTA, SampleCase.USER_CLIENT_QUOTA, SampleCase.IP_QUOTA,
                 SampleCase.BROKER_CONFIG, SampleCase.DEFAULT_BROKER_CONFIG):
        body, _ = _json(c, m.path(case))
        assert body["version"] == 1 and body["config"], case
    assert "/config/brokers/<default>" in m.paths[SampleCase.DEFAULT_BROKER_CONFIG]
    assert {"/config/clients/<default>", "/config/ips/<default>",
            "/config/users/<default>"} <= set(m.paths[SampleCase.DEFAULT_QUOTA])
    body, _ = _json(c, m.path(SampleCase.ACL_LITERAL))
    assert body["version"] == 1 and body["acls"][0]["permissionType"] in ("Allow", "Deny")
    assert m.path(SampleCase.ACL_PREFIXED).startswith("/kafka-acl-extended/prefixed/")
    body, _ = _json(c, m.path(SampleCase.DELEGATION_TOKEN))
    assert body["version"] == 3 and body["tokenId"] == m.path(SampleCase.DELEGATION_TOKEN)[-22:]
    body, _ = _json(c, "/latest_producer_id_block")
    assert int(body["block_end"]) - int(body["block_start"]) == 999


def test_same_seed_gives_identical_trees(sample_cluster: Callable[..., Any]) -> None:
    spec = SampleSpec.everything(topics=3, partitions_per_topic=2)
    a, b = sample_cluster(spec), sample_cluster(spec)

    def walk(c: KazooClient, path: str = "/") -> dict[str, tuple[bytes, int]]:
        out: dict[str, tuple[bytes, int]] = {}
        for child in c.get_children(path):
            p = f"{path.rstrip('/')}/{child}"
            data, stat = c.get(p)
            out[p] = (data, stat.version)
            out.update(walk(c, p))
        return out

    ta, tb = walk(a.client), walk(b.client)
    assert ta == tb
    assert len(ta) == a.manifest.znodes


def test_ephemerals_die_with_the_generating_session(zk_server: ZkServer, zk_chroot: str,
                                                   zk_client: KazooClient) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    gen = KazooClient(hosts=connect, timeout=15.0)
    gen.start(timeout=15.0)
    m = generate_sample_cluster(gen, SampleSpec.clean(topics=1))
    assert len(m.ephemeral_paths) == m.brokers + 1  # brokers and /controller
    expire_session(gen, connect)
    zk_client.sync(zk_chroot)
    for p in m.ephemeral_paths:
        assert zk_client.exists(f"{zk_chroot}{p}") is None, p
    assert zk_client.exists(f"{zk_chroot}/brokers/topics/topic-00000") is not None
    gen.stop()
    gen.close()


def test_refuses_a_chroot_that_already_holds_a_tree(sample_cluster: Callable[..., Any]) -> None:
    sc = sample_cluster(SampleSpec.clean(topics=1))
    with pytest.raises(RuntimeError, match="already holds a Kafka tree"):
        generate_sample_cluster(sc.client, SampleSpec.clean(topics=1))


def test_ten_thousand_partitions_round_trip(sample_cluster: Callable[..., Any]) -> None:
    sc = sample_cluster(SampleSpec.clean(topics=100, partitions_per_topic=100, brokers=5))
    m, c = sc.manifest, sc.client
    assert m.partitions_written == m.partitions_to_migrate == 10_000
    states = _all_states(c)
    assert len(states) == m.state_znodes == 10_000
    assert {p for p, v in states.items() if v > 0} == set(m.state_versions)
    assert 0 < len(m.state_versions) < 10_000


@pytest.mark.slow
def test_hundred_thousand_partitions(sample_cluster: Callable[..., Any]) -> None:
    # how long this takes is measured by benchmarks/timings.py (no timing asserts in tests)
    sc = sample_cluster(SampleSpec.clean(topics=1000, partitions_per_topic=100, brokers=6))
    assert sc.manifest.partitions_written == 100_000
    stat = sc.client.exists("/brokers/topics")
    assert stat is not None and stat.numChildren == 1000


def test_cli_hold_keeps_brokers_until_terminated(zk_server: ZkServer, zk_chroot: str,
                                                 zk_client: KazooClient) -> None:
    sub = f"{zk_chroot}/held"  # a chroot the CLI has to create itself
    proc = subprocess.Popen(
        [sys.executable, "-m", "samples", "--zookeeper", f"{zk_server.connect}{sub}",
         "--topics", "2", "--brokers", "3", "--preset", "everything", "--json", "--hold"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once the tree is complete
        assert line, proc.stderr.read().decode() if proc.stderr else ""
        summary = orjson.loads(line)
    except AssertionError:
        proc.terminate()
        proc.wait(10)
        raise
    try:
        assert summary["brokers"] == 3
        assert "secrets" not in summary
        assert sorted(zk_client.get_children(f"{sub}/brokers/ids")) == ["1", "2", "3"]
        assert proc.poll() is None
    finally:
        proc.terminate()
        assert proc.wait(15) == 0
    zk_client.sync(sub)
    assert zk_client.get_children(f"{sub}/brokers/ids") == []


def test_cli_exit_codes() -> None:
    (port,) = free_ports(1)  # nothing listens there
    r = subprocess.run(
        [sys.executable, "-m", "samples", "--zookeeper", f"127.0.0.1:{port}",
         "--timeout", "2"], capture_output=True, cwd=ROOT, timeout=60,
    )
    assert r.returncode == 3, r.stderr
    assert b"cannot reach ZooKeeper" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "samples", "--zookeeper", f"127.0.0.1:{port}",
         "--brokers", "2", "--replication-factor", "3"], capture_output=True, cwd=ROOT, timeout=60,
    )
    assert r.returncode == 2 and b"replication_factor" in r.stderr
