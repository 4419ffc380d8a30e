"""`zk2kraft snapshot` against a real ZooKeeper: the JSON-lines dump, its redaction, `--out`.

The tree holds every kind of secret ZK-mode Kafka keeps (SCRAM salts and keys, encrypted dynamic
broker passwords, a JAAS config, delegation-token details); the test greps the whole output for
each secret's bytes. Written under a chroot, so the chroot part of the connect string is used.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from migrate.cli import main
from tests.support.ports import free_port

SALT = "c2FsdHNhbHRzYWx0c2FsdA=="
STORED = "U3RvcmVkS2V5U3RvcmVkS2V5U3RvcmVkS2V5MTIzNA=="
SERVER = "U2VydmVyS2V5U2VydmVyS2V5U2VydmVyS2V5NTY3OA=="
CLEAR_PASSWORD = "keystore-pw-Zq81"
JAAS_PASSWORD = "jaas-pw-Xy72"
TOKEN_OWNER = "User%3Atoken-owner-Qa9"


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode()


@pytest.fixture
def secrets_tree(zk_chroot_client: KazooClient) -> dict[str, str]:
    """A small Kafka tree full of secrets; returns the secret strings to grep for."""
    from migrate.translate.password import encode_password

    c = zk_chroot_client
    for path in ("/brokers/topics", "/admin/delete_topics", "/log_dir_event_notification",
                 "/config/topics", "/config/clients", "/config/ips"):
        c.ensure_path(path)
    c.create("/cluster/id", _j({"version": "1", "id": "q1Sh-9_ISia_zwGINzRvyQ"}), makepath=True)
    c.create("/controller_epoch", b"4")
    c.create("/brokers/ids/1", _j({
        "version": 5, "host": "h1", "port": 9092, "jmx_port": -1, "timestamp": "1700000000000",
        "endpoints": ["PLAINTEXT://h1:9092"],
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}, "features": {}}),
        ephemeral=True, makepath=True)
    c.create("/controller", _j({"version": 2, "brokerid": 1, "timestamp": "1700000000000",
                                "kraftControllerEpoch": -1}), ephemeral=True)
    c.create("/brokers/topics/orders", _j({"version": 3, "partitions": {"0": [1]},
                                           "adding_replicas": {}, "removing_replicas": {},
                                           "topic_id": "tGCUt6tCR3a2R1NDlMdp3Q"}))
    c.create("/brokers/topics/orders/partitions/0/state", _j(
        {"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 4, "isr": [1]}),
        makepath=True)
    c.create("/config/topics/orders", _j({"version": 1, "config": {"retention.ms": "86400000"}}))
    scram = f"salt={SALT},stored_key={STORED},server_key={SERVER},iterations=4096"
    c.create("/config/users/alice%40example.com", _j({"version": 1, "config": {
        "SCRAM-SHA-256": scram, "SCRAM-SHA-512": scram, "producer_byte_rate": "1048576"}}),
        makepath=True)
    encoded = encode_password(CLEAR_PASSWORD, "encoder-secret")
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required '
            f'username="admin" password="{JAAS_PASSWORD}";')
    c.create("/config/brokers/1", _j({"version": 1, "config": {
        "listener.name.internal.ssl.keystore.password": encoded,
        "listener.name.internal.plain.sasl.jaas.config": jaas,
        "log.cleaner.threads": "2"}}), makepath=True)
    c.create("/delegation_token/tokens/tok-1", _j({
        "version": 3, "owner": TOKEN_OWNER, "tokenRequester": TOKEN_OWNER,
        "renewers": ["User%3Arenewer-Pz3"], "issueTimestamp": 1, "maxTimestamp": 3,
        "expiryTimestamp": 2, "tokenId": "tok-1"}), makepath=True)
    return {"salt": SALT, "stored_key": STORED, "server_key": SERVER, "encoded": encoded,
            "clear": CLEAR_PASSWORD, "jaas": JAAS_PASSWORD, "owner": TOKEN_OWNER,
            "renewer": "renewer-Pz3"}


@pytest.fixture
def connect(zk_server: Any, zk_chroot: str) -> str:
    return f"{zk_server.connect}{zk_chroot}"


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_snapshot_dumps_one_object_per_entity_without_secrets(
    secrets_tree: dict[str, str], connect: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["snapshot", "--zookeeper", connect]) == 0
    out, err = capsys.readouterr()
    for name, secret in secrets_tree.items():
        assert secret not in out, name
        assert secret not in err, name
    objs = _lines(out)
    by_path = {o["path"]: o for o in objs}
    assert set(o["kind"] for o in objs) >= {
        "cluster_id", "controller", "controller_epoch", "broker", "topic", "partition_state",
        "config", "delegation_token"}
    for o in objs:
        assert set(o) == {"kind", "path", "data", "stat"}
    assert by_path["/brokers/ids/1"]["kind"] == "broker"
    assert by_path["/brokers/ids/1"]["stat"]["ephemeral_owner"] != 0
    state = by_path["/brokers/topics/orders/partitions/0/state"]
    assert state["data"]["leader"] == 1 and state["stat"]["version"] == 0
    users = by_path["/config/users/alice%40example.com"]["data"]["config"]
    assert users == {"SCRAM-SHA-256": "<redacted>", "SCRAM-SHA-512": "<redacted>",
                     "producer_byte_rate": "1048576"}
    brokers = by_path["/config/brokers/1"]["data"]["config"]
    assert brokers["listener.name.internal.ssl.keystore.password"] == "<redacted>"
    assert brokers["listener.name.internal.plain.sasl.jaas.config"] == "<redacted>"
    assert brokers["log.cleaner.threads"] == "2"
    assert by_path["/config/topics/orders"]["data"]["config"] == {"retention.ms": "86400000"}
    assert by_path["/delegation_token/tokens/tok-1"]["data"] == "<redacted>"


def test_snapshot_out_file_is_0600_and_equals_stdout(
    secrets_tree: dict[str, str], connect: str, capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    assert main(["snapshot", "--zookeeper", connect]) == 0
    stdout = capsys.readouterr().out
    target = tmp_path / "snap.jsonl"
    assert main(["snapshot", "--zookeeper", connect, "--out", str(target)]) == 0
    out, _ = capsys.readouterr()
    assert out == ""
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert _lines(target.read_text()) == _lines(stdout)
    assert [p.name for p in tmp_path.iterdir()] == ["snap.jsonl"]


def test_snapshot_failure_leaves_no_half_written_file(
    secrets_tree: dict[str, str], connect: str, zk_chroot_client: KazooClient,
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    target = tmp_path / "snap.jsonl"
    target.write_text("previous dump\n")
    zk_chroot_client.set("/brokers/topics/orders", b"\xff\xfe not json")
    code = main(["snapshot", "--zookeeper", connect, "--out", str(target)])
    assert code == 2
    assert "/brokers/topics/orders" in capsys.readouterr().err
    assert target.read_text() == "previous dump\n"
    assert [p.name for p in tmp_path.iterdir()] == ["snap.jsonl"]


def test_snapshot_unreachable_exits_3_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    port = free_port()  # nothing listens there
    target = tmp_path / "snap.jsonl"
    code = main(["snapshot", "--zookeeper", f"127.0.0.1:{port}", "--zk-timeout", "2",
                 "--out", str(target)])
    assert code == 3
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_snapshot_out_bad_directory_exits_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["snapshot", "--zookeeper", "127.0.0.1:1", "--out", "/nonexistent-dir/x"])
    assert code == 2
    assert "--out" in capsys.readouterr().err


def test_generated_tree_snapshot_has_no_secret_and_every_case(
    sample_cluster: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from samples import SampleCase, SampleSpec

    cluster = sample_cluster(SampleSpec.everything())
    m = cluster.manifest
    target = tmp_path / "snap.jsonl"
    assert main(["snapshot", "--zookeeper", cluster.connect, "--out", str(target)]) == 0
    _, err = capsys.readouterr()
    text = target.read_text()
    assert m.secrets
    for secret in m.secrets:
        assert secret not in text and secret not in err
    paths = {o["path"] for o in _lines(text)}
    for case in (SampleCase.SCRAM, SampleCase.BROKERS, SampleCase.TOPIC_CONFIG,
                 SampleCase.USER_CLIENT_QUOTA, SampleCase.ACL_LITERAL, SampleCase.ACL_PREFIXED,
                 SampleCase.DELEGATION_TOKEN, SampleCase.LOG_DIR_EVENT,
                 SampleCase.MIGRATION_ZNODE, SampleCase.PENDING_DELETION):
        for path in m.paths[case]:
            assert path in paths, (case, path)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
