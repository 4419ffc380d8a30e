"""A ZooKeeper tree written by real Kafka, not by our sample generator, migrates and verifies.

A Kafka 3.9.1 broker in ZooKeeper mode runs against the test ZooKeeper (in a chroot) and stays
up throughout, so its ephemeral `/brokers/ids/N` registration and its `/controller` are live
while we read. Everything in the tree comes from Kafka's own code paths: topics through the Admin
API (kafka-python; `TopicCommand` is not in the 3.9.1 core jar, it moved to kafka-tools), topic,
broker and cluster-default configs, user / client / user+client / ip quotas and SCRAM-SHA-256/512
users through `kafka.admin.ConfigCommand --bootstrap-server`, literal and prefixed ACLs through
`kafka.admin.AclCommand --bootstrap-server` (AclAuthorizer), a deleted topic, the consumer
offsets topic (a committed offset) and a producer-id block (an idempotent producer). Delegation
tokens are not exercised: creating one needs a SASL-authenticated connection.

The tree must then be clean: `read_cluster` takes all of it, `plan` finds no blocker and no
warning, `migrate --cutover none` into three voters and `verify` both exit 0, and the records in
the log say exactly what the admin tools were asked to do (SCRAM keys are recomputed from the
password, so the credentials would really authenticate). Finally a 3-voter Kafka 3.9.1 KRaft
quorum (migration disabled) starts on the three voter dirs and finalizes the migration.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.kafka import (
    KafkaZkBroker,
    admin_tool,
    assert_replayed_cleanly,
    kafka_quorum,
)
from writers import MetadataRecord, open_log_source
from zkreader import ClusterSnapshot, ConnectOptions, open_session, read_cluster

with warnings.catch_warnings():
    # kafka-python 3.0 loads its schemas with importlib.resources.read_text (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.slow,
    # kafka-python is only the test's client; its own deprecations are not ours to fail on
    pytest.mark.filterwarnings("ignore::DeprecationWarning:kafka"),
]

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
BROKER = 0  # KRaft voter ids 1..3 below must differ from the ZK broker ids
PASSWORD = "rehearsal-scram-password"  # noqa: S105 - a test credential, asserted never printed
SVC_USER = "svc@example.com"  # '@' is sanitized to %40 in /config/users
SVC_CLIENT = "app one"  # ' ' is sanitized to %20 in /config/users/<u>/clients
GROUP = "rehearsal-group"
ENCODER_SECRET = "rehearsal-encoder-secret"  # noqa: S105 - the broker's password.encoder.secret
KEY_PASSWORD = "rehearsal-key-password"  # noqa: S105 - stored encrypted by Kafka in ZooKeeper
SENSITIVE = "listener.name.plaintext.ssl.key.password"
RACK = "rack-a"
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"

TOPICS = {  # name -> partitions
    "orders": 6,
    "payments": 3,
    "pay-ledger": 2,
    "with.dots_and-dashes": 1,
}
DELETED = "doomed"

# Kafka's codes (AclOperation, AclPermissionType, ResourceType, PatternType, ConfigResource.Type)
READ, WRITE, ALL, DESCRIBE, IDEMPOTENT_WRITE, CREATE_TOKENS = 3, 4, 2, 8, 12, 13
DENY, ALLOW = 2, 3
TOPIC_RES, GROUP_RES, CLUSTER_RES, TXN_RES, TOKEN_RES, USER_RES = 2, 3, 4, 5, 6, 7
LITERAL, PREFIXED = 3, 4
TOPIC_CFG, BROKER_CFG = 2, 4


def _config(bootstrap: str, *args: str) -> None:
    admin_tool("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--alter", *args)


def _acl(bootstrap: str, *args: str) -> None:
    admin_tool("kafka.admin.AclCommand", "--bootstrap-server", bootstrap, "--add", "--force",
               *args)


def _wait_until(check: Callable[[], bool], what: str, broker: KafkaZkBroker,
                timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not seen in ZooKeeper within {timeout:.0f}s\n"
                                 f"--- broker log tail ---\n{broker.log_text()[-4000:]}")
        time.sleep(0.2)  # waiting on another process's ZooKeeper writes


def _populate(broker: KafkaZkBroker, zk: KazooClient) -> None:
    """Write the tree through Kafka's own admin paths; return once ZooKeeper holds it all."""
    bootstrap = broker.bootstrap_servers
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)
    try:
        admin.create_topics([
            NewTopic("orders", TOPICS["orders"], 1,
                     topic_configs={"cleanup.policy": "compact", "retention.ms": "86400000"}),
            NewTopic("payments", TOPICS["payments"], 1),
            NewTopic("pay-ledger", TOPICS["pay-ledger"], 1),
            NewTopic("with.dots_and-dashes", TOPICS["with.dots_and-dashes"], 1),
            NewTopic(DELETED, 2, 1),
        ], timeout_ms=60_000)
        admin.delete_topics([DELETED], timeout_ms=60_000)
    finally:
        admin.close()
    _wait_until(lambda: not zk.exists(f"/brokers/topics/{DELETED}")
                and not zk.exists(f"/admin/delete_topics/{DELETED}"),
                f"deletion of topic {DELETED!r}", broker)

    # configs: topic, one broker, the cluster-wide broker default
    _config(bootstrap, "--entity-type", "topics", "--entity-name", "payments",
            "--add-config", "max.message.bytes=2097152")
    # a sensitive one too: Kafka stores it encrypted with password.encoder.secret (and from then
    # on wants every sensitive entry repeated in each --alter of that broker, so one call)
    _config(bootstrap, "--entity-type", "brokers", "--entity-name", str(BROKER),
            "--add-config", f"log.cleaner.threads=2,{SENSITIVE}={KEY_PASSWORD}")
    _config(bootstrap, "--entity-type", "brokers", "--entity-default",
            "--add-config", "message.max.bytes=2000000")
    # quotas: user, user default, client, client default, user+client, defaults pair, ip
    _config(bootstrap, "--entity-type", "users", "--entity-name", "alice",
            "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    _config(bootstrap, "--entity-type", "users", "--entity-default",
            "--add-config", "producer_byte_rate=524288")
    _config(bootstrap, "--entity-type", "clients", "--entity-name", "app-1",
            "--add-config", "producer_byte_rate=4096")
    _config(bootstrap, "--entity-type", "clients", "--entity-default",
            "--add-config", "request_percentage=50")
    _config(bootstrap, "--entity-type", "users", "--entity-name", SVC_USER,
            "--entity-type", "clients", "--entity-name", SVC_CLIENT,
            "--add-config", "request_percentage=25")
    _config(bootstrap, "--entity-type", "users", "--entity-default",
            "--entity-type", "clients", "--entity-default",
            "--add-config", "consumer_byte_rate=65536")
    _config(bootstrap, "--entity-type", "ips", "--entity-name", "127.0.0.1",
            "--add-config", "connection_creation_rate=10")
    _config(bootstrap, "--entity-type", "ips", "--entity-default",
            "--add-config", "connection_creation_rate=100")
    # SCRAM users (alice also has quotas: both live in /config/users/alice)
    _config(bootstrap, "--entity-type", "users", "--entity-name", "alice", "--add-config",
            f"SCRAM-SHA-256=[iterations=8192,password={PASSWORD}],"
            f"SCRAM-SHA-512=[password={PASSWORD}]")
    _config(bootstrap, "--entity-type", "users", "--entity-name", SVC_USER,
            "--add-config", f"SCRAM-SHA-512=[password={PASSWORD}]")

    # ACLs, literal and prefixed, on every resource kind a ZK cluster commonly has
    _acl(bootstrap, "--allow-principal", "User:alice", "--operation", "Read",
         "--operation", "Describe", "--topic", "orders")
    _acl(bootstrap, "--deny-principal", "User:mallory", "--deny-host", "10.0.0.66",
         "--operation", "All", "--topic", "orders")
    _acl(bootstrap, "--allow-principal", "User:bob", "--operation", "Write",
         "--topic", "pay-", "--resource-pattern-type", "prefixed")
    _acl(bootstrap, "--allow-principal", "User:alice", "--operation", "Read",
         "--group", "rehearsal-", "--resource-pattern-type", "prefixed")
    _acl(bootstrap, "--allow-principal", "User:alice", "--operation", "IdempotentWrite",
         "--cluster")
    _acl(bootstrap, "--allow-principal", "User:bob", "--operation", "Write",
         "--transactional-id", "tx-1")
    # a User resource: its znode name holds a colon (/kafka-acl/User/User:alice)
    _acl(bootstrap, "--allow-principal", "User:bob", "--operation", "CreateTokens",
         "--user-principal", "User:alice")
    _acl(bootstrap, "--allow-principal", "User:bob", "--operation", "Describe",
         "--delegation-token", "token-1")

    # an idempotent producer makes the broker take a producer-id block
    producer = KafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all",
                             request_timeout_ms=30_000)
    try:
        producer.send("orders", key=b"k", value=b"v", partition=0).get(timeout=60)
    finally:
        producer.close(timeout=10)
    # a committed offset makes the broker create __consumer_offsets
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP,
                             enable_auto_commit=False, request_timeout_ms=60_000)
    try:
        tp = TopicPartition("orders", 0)
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(1, "", -1)})
    finally:
        consumer.close()
    _wait_until(lambda: zk.exists("/latest_producer_id_block") is not None,
                "/latest_producer_id_block", broker)
    _wait_until(lambda: all(
        zk.exists(f"/brokers/topics/__consumer_offsets/partitions/{p}/state") is not None
        for p in range(3)), "__consumer_offsets partition states", broker)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "200"})


def _ok(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, (
        f"{what} exited {proc.returncode}\n--- stdout ---\n{proc.stdout[-6000:]}\n"
        f"--- stderr ---\n{proc.stderr[-6000:]}"
    )


def _scram_keys(password: str, salt: bytes, iterations: int, mechanism: int
                ) -> tuple[bytes, bytes]:
    """RFC 5802 StoredKey and ServerKey, as Kafka's ScramFormatter computes them."""
    digest = "sha256" if mechanism == 1 else "sha512"
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    stored = hashlib.new(digest, client_key).digest()
    server = hmac.new(salted, b"Server Key", digest).digest()
    return stored, server


def _secrets_in_tree(snapshot: ClusterSnapshot) -> list[str]:
    """The password and every base64 salt/key Kafka stored: none may appear in any output."""
    out = [PASSWORD, KEY_PASSWORD, ENCODER_SECRET]
    encrypted = snapshot.broker_configs[str(BROKER)].config[SENSITIVE]
    out += [v for k, _, v in (p.partition(":") for p in encrypted.split(","))
            if k in ("encryptedPassword", "salt", "initializationVector")]
    for znode in snapshot.user_configs.values():
        for key, text in znode.config.items():
            if key.startswith("SCRAM-"):
                out += [v for k, _, v in (p.partition("=") for p in text.split(","))
                        if k in ("salt", "stored_key", "server_key")]
    return out


def _records(voter: Path) -> list[MetadataRecord]:
    return [r for entry in open_log_source(voter).entries() for r in entry.batch.records
            if isinstance(r, MetadataRecord)]


def _of(records: list[MetadataRecord], kind: str) -> list[dict[str, Any]]:
    return [dict(r.data) for r in records if r.type == kind]


def _kraft_quorum_takes_over(voters: dict[int, Path], workdir: Path) -> None:
    """Three 3.9.1 KRaft controllers (migration disabled) start on the voter dirs `migrate`
    wrote, replay the whole migrated log and finalize the migration (POST_MIGRATION)."""
    with kafka_quorum(workdir, voters,
                      extra={"zookeeper.metadata.migration.enable": "false"}) as nodes:
        for node in nodes:
            node.wait_for_log(r"migration state from MIGRATION to POST_MIGRATION", timeout=90)
    for node in nodes:
        assert_replayed_cleanly(node)


def test_kafka_written_zk_tree_migrates_and_verifies(
    zk_server: Any, zk_chroot: str, zk_chroot_client: KazooClient, tmp_path: Path
) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    # a second, SASL_PLAINTEXT (SCRAM) listener under a custom name, and a rack: the broker
    # registration then carries a non-trivial listener_security_protocol_map
    broker = KafkaZkBroker(tmp_path / "broker", connect, broker_id=BROKER,
                           listeners={"EXTERNAL": "SASL_PLAINTEXT"}, extra={
        "broker.rack": RACK,
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.external.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN,
        "listener.name.external.scram-sha-512.sasl.jaas.config": SCRAM_LOGIN,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:ANONYMOUS",
        "password.encoder.secret": ENCODER_SECRET,
    })
    with broker:
        _populate(broker, zk_chroot_client)

        # 1. our reader takes the whole tree Kafka wrote
        with open_session(ConnectOptions(connect, timeout_s=15)) as session:
            snapshot = read_cluster(session, watch=False)
        assert set(snapshot.brokers) == {BROKER}
        assert snapshot.brokers[BROKER].stat.ephemeral_owner != 0  # live registration
        assert snapshot.controller is not None and snapshot.controller.broker_id == BROKER
        assert not snapshot.controller.is_kraft
        assert snapshot.cluster_id is not None
        assert set(snapshot.topics) == {*TOPICS, "__consumer_offsets"}
        assert not snapshot.pending_deletions
        assert snapshot.producer_id_block is not None
        assert len(snapshot.partition_states) == sum(TOPICS.values()) + 3
        secrets = _secrets_in_tree(snapshot)
        assert len(secrets) == 3 + 3 + 3 * 3  # passwords, the ciphertext, 3 SCRAM credentials

        # 2. plan: a tree real Kafka wrote has no blocker and no warning
        root = tmp_path / "zk2kraft"
        root.mkdir()
        # without the encoder secret the encrypted broker password is a blocker naming it
        blocked = _cli("plan", "--zookeeper", connect, "--json", str(root / "blocked.json"))
        assert blocked.returncode == 1, blocked.stdout + blocked.stderr
        doc = json.loads((root / "blocked.json").read_text())
        assert [b["path"] for b in doc["blockers"]] == [f"/config/brokers/{BROKER}"], doc
        assert SENSITIVE in doc["blockers"][0]["message"]
        encoder = ("--password-encoder-secret", ENCODER_SECRET)
        # asked on the SCRAM listener: ApiVersions is answered before authentication
        external = f"127.0.0.1:{broker.listener_ports['EXTERNAL']}"
        plan = _cli("plan", "--zookeeper", connect, *encoder, "--bootstrap-server", external,
                    "--json", str(root / "plan.json"))
        _ok(plan, "zk2kraft plan")
        doc = json.loads((root / "plan.json").read_text())
        assert doc["blockers"] == [] and doc["warnings"] == [], doc
        assert doc["source"]["brokers"] == [  # the 3.9.1 broker this test started
            {"broker": BROKER, "address": external, "kafka_at_least": "3.9",
             "kafka_before": None, "error": None}], doc["source"]
        assert doc["source"]["kafka"] == "3.9 or later", doc["source"]
        assert (doc["brokers"], doc["topics"]) == (1, len(TOPICS) + 1)

        # 3. migrate --cutover none into three voters, then verify: both exit 0
        voters = [f"--voter={n}={root / f'voter{n}'}" for n in (1, 2, 3)]
        # the operator's command as documented: the default engine (auto: in-process here)
        migrate = _cli("migrate", "--zookeeper", connect, *voters, "--cutover", "none", *encoder,
                       "--json", str(root / "migrate.json"))
        _ok(migrate, "zk2kraft migrate --cutover none")
        verify = _cli("verify", "--zookeeper", connect, *voters,
                      "--json", str(root / "verify.json"))
        _ok(verify, "zk2kraft verify")
        report = json.loads((root / "verify.json").read_text())
        assert report["parity"] is True and report["differences"] == [], report
        checked = {k: v for k, v in report["checked"].items() if v}
        assert checked == {  # parity was checked on everything Kafka wrote, not vacuously
            "broker": 1, "topic": len(TOPICS) + 1, "partition": sum(TOPICS.values()) + 3,
            "topic_config": 3, "broker_config": 2, "client_quota": 8, "scram": 3, "acl": 9,
            "producer_ids": 1,
        }, report["checked"]

        outputs = [p.stdout + p.stderr for p in (blocked, plan, migrate, verify)]
        outputs += [(root / f).read_text()
                    for f in ("blocked.json", "plan.json", "migrate.json", "verify.json")]
        for text in outputs:
            for secret in secrets:
                assert secret not in text

    # 4. the log says what the admin tools were told (broker stopped: nothing reads ZK now)
    logs = [b"".join(p.read_bytes() for p in sorted(
        (root / f"voter{n}" / "__cluster_metadata-0").glob("*.log"))) for n in (1, 2, 3)]
    assert logs[0] and logs[0] == logs[1] == logs[2]
    records = _records(root / "voter1")
    assert records[0].type == "FEATURE_LEVEL_RECORD"
    assert records[0].data["name"] == "metadata.version"

    [reg] = _of(records, "REGISTER_BROKER_RECORD")
    assert reg["brokerId"] == BROKER and reg["isMigratingZkBroker"] is True
    assert reg["rack"] == RACK
    assert {(e["name"], e["host"], e["port"], e["securityProtocol"]) for e in reg["endPoints"]} == {
        ("PLAINTEXT", "127.0.0.1", broker.port, 0),
        ("EXTERNAL", "127.0.0.1", broker.listener_ports["EXTERNAL"], 2),  # SASL_PLAINTEXT
    }

    topics = {t["name"]: t["topicId"] for t in _of(records, "TOPIC_RECORD")}
    assert topics == {n: snapshot.topics[n].topic_id for n in (*TOPICS, "__consumer_offsets")}
    parts = _of(records, "PARTITION_RECORD")
    assert len(parts) == sum(TOPICS.values()) + 3
    assert all(p["replicas"] == [BROKER] and p["isr"] == [BROKER] and p["leader"] == BROKER
               for p in parts)

    configs = {(c["resourceType"], c["resourceName"], c["name"], c["value"])
               for c in _of(records, "CONFIG_RECORD")}
    assert configs == {
        (TOPIC_CFG, "orders", "cleanup.policy", "compact"),
        (TOPIC_CFG, "orders", "retention.ms", "86400000"),
        (TOPIC_CFG, "payments", "max.message.bytes", "2097152"),
        (TOPIC_CFG, "__consumer_offsets", "cleanup.policy", "compact"),
        (TOPIC_CFG, "__consumer_offsets", "compression.type", "producer"),
        (TOPIC_CFG, "__consumer_offsets", "segment.bytes", "104857600"),
        (BROKER_CFG, str(BROKER), "log.cleaner.threads", "2"),
        (BROKER_CFG, str(BROKER), SENSITIVE, KEY_PASSWORD),  # decrypted, as Kafka migrates it
        (BROKER_CFG, "", "message.max.bytes", "2000000"),
    }

    def entity(*pairs: tuple[str, str | None]) -> tuple[tuple[str, str | None], ...]:
        return pairs

    quotas = {(tuple((e["entityType"], e["entityName"]) for e in q["entity"]),
               q["key"], q["value"]) for q in _of(records, "CLIENT_QUOTA_RECORD")}
    assert quotas == {
        (entity(("user", "alice")), "consumer_byte_rate", 2097152.0),
        (entity(("user", "alice")), "producer_byte_rate", 1048576.0),
        (entity(("user", None)), "producer_byte_rate", 524288.0),
        (entity(("client-id", "app-1")), "producer_byte_rate", 4096.0),
        (entity(("client-id", None)), "request_percentage", 50.0),
        (entity(("user", SVC_USER), ("client-id", SVC_CLIENT)), "request_percentage", 25.0),
        (entity(("user", None), ("client-id", None)), "consumer_byte_rate", 65536.0),
        (entity(("ip", "127.0.0.1")), "connection_creation_rate", 10.0),
        (entity(("ip", None)), "connection_creation_rate", 100.0),
    }

    scram = _of(records, "USER_SCRAM_CREDENTIAL_RECORD")
    assert {(s["name"], s["mechanism"], s["iterations"]) for s in scram} == {
        ("alice", 1, 8192), ("alice", 2, 4096), (SVC_USER, 2, 4096)}
    for s in scram:  # the migrated keys would authenticate the password Kafka was given
        stored, server = _scram_keys(PASSWORD, s["salt"], s["iterations"], s["mechanism"])
        assert (s["storedKey"], s["serverKey"]) == (stored, server), s["name"]
        assert base64.b64encode(s["salt"]).decode() in secrets

    acls = {(a["resourceType"], a["resourceName"], a["patternType"], a["principal"], a["host"],
             a["operation"], a["permissionType"])
            for a in _of(records, "ACCESS_CONTROL_ENTRY_RECORD")}
    assert acls == {
        (TOPIC_RES, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
        (TOPIC_RES, "orders", LITERAL, "User:alice", "*", DESCRIBE, ALLOW),
        (TOPIC_RES, "orders", LITERAL, "User:mallory", "10.0.0.66", ALL, DENY),
        (TOPIC_RES, "pay-", PREFIXED, "User:bob", "*", WRITE, ALLOW),
        (GROUP_RES, "rehearsal-", PREFIXED, "User:alice", "*", READ, ALLOW),
        (CLUSTER_RES, "kafka-cluster", LITERAL, "User:alice", "*", IDEMPOTENT_WRITE, ALLOW),
        (TXN_RES, "tx-1", LITERAL, "User:bob", "*", WRITE, ALLOW),
        (USER_RES, "User:alice", LITERAL, "User:bob", "*", CREATE_TOKENS, ALLOW),
        (TOKEN_RES, "token-1", LITERAL, "User:bob", "*", DESCRIBE, ALLOW),
    }

    [pid] = _of(records, "PRODUCER_IDS_RECORD")
    block = snapshot.producer_id_block
    assert block is not None
    assert pid["brokerId"] == block.broker_id == BROKER
    assert pid["nextProducerId"] == block.block_end + 1

    # 5. and a KRaft quorum takes the migrated metadata over
    _kraft_quorum_takes_over({n: root / f"voter{n}" for n in (1, 2, 3)}, tmp_path)


def test_fresh_kafka_cluster_migrates_and_verifies(
    zk_server: Any, zk_chroot: str, tmp_path: Path
) -> None:
    """A ZK-mode cluster nobody has used yet: Kafka's pre-created, still empty
    `/latest_producer_id_block` means "no block" (it was once rejected as malformed, exit 2)."""
    connect = f"{zk_server.connect}{zk_chroot}"
    root = tmp_path / "zk2kraft"
    root.mkdir()
    voters = [f"--voter={n}={root / f'voter{n}'}" for n in (1, 2, 3)]
    with KafkaZkBroker(tmp_path / "broker", connect, broker_id=BROKER):
        with open_session(ConnectOptions(connect, timeout_s=15)) as session:
            snapshot = read_cluster(session, watch=False)
        assert snapshot.producer_id_block is None and not snapshot.topics
        assert set(snapshot.brokers) == {BROKER}
        plan = _cli("plan", "--zookeeper", connect, "--json", str(root / "plan.json"))
        _ok(plan, "zk2kraft plan")
        doc = json.loads((root / "plan.json").read_text())
        assert doc["blockers"] == [] and doc["warnings"] == [], doc
        _ok(_cli("migrate", "--zookeeper", connect, *voters, "--cutover", "none",
                 "--spark-master", "in-process"), "zk2kraft migrate --cutover none")
        _ok(_cli("verify", "--zookeeper", connect, *voters), "zk2kraft verify")
    types = [r.type for r in _records(root / "voter1")]
    assert types == ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD", "REGISTER_BROKER_RECORD",
                     "ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]


def test_pre_2_8_topic_blocks_until_a_kafka_controller_assigns_its_id(
    zk_server: Any, zk_chroot: str, zk_chroot_client: KazooClient, tmp_path: Path
) -> None:
    """Our TOPIC_WITHOUT_ID blocker and its advice, checked against real Kafka: a topic created
    at inter.broker.protocol.version 2.7 has no id, so `plan` blocks (exit 1) naming it; after a
    controller failover at the current IBP (the broker restarted without the pin) Kafka has
    given it an id, `plan` is clean and `migrate` + `verify` pass."""
    connect = f"{zk_server.connect}{zk_chroot}"
    root = tmp_path / "zk2kraft"
    root.mkdir()
    with KafkaZkBroker(tmp_path / "old", connect, broker_id=BROKER,
                       extra={"inter.broker.protocol.version": "2.7"}) as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers,
                                 request_timeout_ms=60_000)
        try:
            admin.create_topics([NewTopic("legacy", 2, 1)], timeout_ms=60_000)
        finally:
            admin.close()
        data, _ = zk_chroot_client.get("/brokers/topics/legacy")
        assert "topic_id" not in json.loads(data), data
        blocked = _cli("plan", "--zookeeper", connect, "--json", str(root / "blocked.json"))
        assert blocked.returncode == 1, blocked.stdout + blocked.stderr
        doc = json.loads((root / "blocked.json").read_text())
        assert [(b["code"], b["path"]) for b in doc["blockers"]] == [
            ("TOPIC_WITHOUT_ID", "/brokers/topics/legacy")], doc

    voters = [f"--voter={n}={root / f'voter{n}'}" for n in (1, 2, 3)]
    with KafkaZkBroker(tmp_path / "new", connect, broker_id=BROKER) as broker:
        _wait_until(lambda: "topic_id" in json.loads(
            zk_chroot_client.get("/brokers/topics/legacy")[0]), "legacy's topic id", broker)
        plan = _cli("plan", "--zookeeper", connect, "--json", str(root / "plan.json"))
        _ok(plan, "zk2kraft plan")
        doc = json.loads((root / "plan.json").read_text())
        assert doc["blockers"] == [] and doc["warnings"] == [], doc
        _ok(_cli("migrate", "--zookeeper", connect, *voters, "--cutover", "none",
                 "--spark-master", "in-process"), "zk2kraft migrate --cutover none")
        _ok(_cli("verify", "--zookeeper", connect, *voters), "zk2kraft verify")
        topic_id = json.loads(zk_chroot_client.get("/brokers/topics/legacy")[0])["topic_id"]
    assert {t["name"]: t["topicId"] for t in _of(_records(root / "voter1"), "TOPIC_RECORD")} == {
        "legacy": topic_id}


def test_in_flight_reassignment_from_real_kafka_warns_and_migrates(
    zk_server: Any, zk_chroot: str, zk_chroot_client: KazooClient, tmp_path: Path
) -> None:
    """Two ZK-mode brokers; a partition moved from broker 0 to broker 1 through the Admin API
    (KIP-455) is held in flight by a 1 B/s replication throttle. Kafka's tree then carries
    adding/removing replicas: `plan` warns REASSIGNMENT_IN_FLIGHT for that topic and nothing
    else, and `migrate` + `verify` pass with the move carried over."""
    connect = f"{zk_server.connect}{zk_chroot}"
    root = tmp_path / "zk2kraft"
    root.mkdir()
    voters = [f"--voter={n}={root / f'voter{n}'}" for n in (1, 2, 3)]
    b0 = KafkaZkBroker(tmp_path / "b0", connect, broker_id=0, heap="384m")
    b1 = KafkaZkBroker(tmp_path / "b1", connect, broker_id=10, heap="384m",
                       extra={"replica.fetch.max.bytes": "1"})  # one batch per fetch
    with b0, b1:
        bootstrap = b0.bootstrap_servers
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)
        try:
            admin.create_topics([NewTopic("moving", replica_assignments={0: [0]})],
                                timeout_ms=60_000)
            _config(bootstrap, "--entity-type", "topics", "--entity-name", "moving",
                    "--add-config", "leader.replication.throttled.replicas=*,"
                    "follower.replication.throttled.replicas=*")
            _config(bootstrap, "--entity-type", "brokers", "--entity-name", "0",
                    "--add-config", "leader.replication.throttled.rate=1")
            _config(bootstrap, "--entity-type", "brokers", "--entity-name", "10",
                    "--add-config", "follower.replication.throttled.rate=1")
            producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=0,
                                     max_request_size=2_000_000)
            try:
                for _ in range(20):
                    producer.send("moving", value=os.urandom(100_000), partition=0)
                producer.flush(timeout=60)
            finally:
                producer.close(timeout=10)
            result = admin.alter_partition_reassignments({TopicPartition("moving", 0): [10]},
                                                          timeout_ms=60_000)
            assert all(err is None for err in result.values()), result
        finally:
            admin.close()

        def topic_znode() -> dict[str, Any]:
            doc: dict[str, Any] = json.loads(zk_chroot_client.get("/brokers/topics/moving")[0])
            return doc

        _wait_until(lambda: topic_znode().get("adding_replicas", {}).get("0") == [10],
                    "the reassignment in /brokers/topics/moving", b0)
        plan = _cli("plan", "--zookeeper", connect, "--json", str(root / "plan.json"))
        _ok(plan, "zk2kraft plan")
        doc = json.loads((root / "plan.json").read_text())
        assert doc["blockers"] == [], doc
        assert [(w["code"], w["path"]) for w in doc["warnings"]] == [
            ("REASSIGNMENT_IN_FLIGHT", "/brokers/topics/moving")], doc
        _ok(_cli("migrate", "--zookeeper", connect, *voters, "--cutover", "none",
                 "--spark-master", "in-process"), "zk2kraft migrate --cutover none")
        _ok(_cli("verify", "--zookeeper", connect, *voters), "zk2kraft verify")
        znode = topic_znode()
        assert znode["adding_replicas"] == {"0": [10]}  # still in flight after verify
    [part] = _of(_records(root / "voter1"), "PARTITION_RECORD")
    assert part["replicas"] == znode["partitions"]["0"]
    assert (part["addingReplicas"], part["removingReplicas"]) == ([10], [0])
    assert sorted(r["brokerId"] for r in _of(_records(root / "voter1"),
                                             "REGISTER_BROKER_RECORD")) == [0, 10]


def test_deletion_stuck_on_a_dead_broker_warns_and_is_not_migrated(
    zk_server: Any, zk_chroot: str, zk_chroot_client: KazooClient, tmp_path: Path
) -> None:
    """A topic whose only replica's broker is down cannot finish deleting: Kafka leaves it in
    /admin/delete_topics with its znodes. `plan` warns TOPIC_PENDING_DELETION for it and
    nothing else (its dead broker is no blocker, as the topic is not migrated), and `migrate` +
    `verify` pass without it."""
    connect = f"{zk_server.connect}{zk_chroot}"
    root = tmp_path / "zk2kraft"
    root.mkdir()
    voters = [f"--voter={n}={root / f'voter{n}'}" for n in (1, 2, 3)]
    b0 = KafkaZkBroker(tmp_path / "b0", connect, broker_id=0, heap="384m")
    b1 = KafkaZkBroker(tmp_path / "b1", connect, broker_id=10, heap="384m")
    with b0, b1:
        admin = KafkaAdminClient(bootstrap_servers=b0.bootstrap_servers,
                                 request_timeout_ms=60_000)
        try:
            admin.create_topics([NewTopic("kept", replica_assignments={0: [0]}),
                                 NewTopic("stuck", replica_assignments={0: [10], 1: [10]})],
                                timeout_ms=60_000)
            b1.stop()
            _wait_until(lambda: zk_chroot_client.exists("/brokers/ids/10") is None,
                        "broker 10 leaving /brokers/ids", b0)
            with contextlib.suppress(KafkaError):  # times out: the deletion cannot complete
                admin.delete_topics(["stuck"], timeout_ms=2_000)
        finally:
            admin.close()
        assert zk_chroot_client.exists("/admin/delete_topics/stuck") is not None
        assert zk_chroot_client.exists("/brokers/topics/stuck") is not None
        plan = _cli("plan", "--zookeeper", connect, "--json", str(root / "plan.json"))
        _ok(plan, "zk2kraft plan")
        doc = json.loads((root / "plan.json").read_text())
        assert doc["blockers"] == [], doc
        assert [(w["code"], w["path"]) for w in doc["warnings"]] == [
            ("TOPIC_PENDING_DELETION", "/admin/delete_topics/stuck")], doc
        _ok(_cli("migrate", "--zookeeper", connect, *voters, "--cutover", "none",
                 "--spark-master", "in-process"), "zk2kraft migrate --cutover none")
        _ok(_cli("verify", "--zookeeper", connect, *voters), "zk2kraft verify")
        assert zk_chroot_client.exists("/admin/delete_topics/stuck") is not None  # still stuck
    records = _records(root / "voter1")
    assert [t["name"] for t in _of(records, "TOPIC_RECORD")] == ["kept"]
    assert [r["brokerId"] for r in _of(records, "REGISTER_BROKER_RECORD")] == [0]
