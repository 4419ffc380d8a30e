"""The offline rehearsal: a stopped ZooKeeper-mode Kafka 3.9.1 cluster comes back in KRaft mode.

Built with Kafka's own tools and clients: three ZooKeeper-mode 3.9.1 brokers (PLAINTEXT plus a
SASL_PLAINTEXT/SCRAM listener, AclAuthorizer), topics made through the Admin API (compacted,
RF=1, RF=3, a many-partition one and a transactional one), more than 10,000 keyed records, a
transactional producer (committed and aborted transactions), a consumer group with commits,
SCRAM users, quotas and dynamic configs through `kafka.admin.ConfigCommand`, ACLs through
`kafka.admin.AclCommand`. Before the stop, Kafka's clients record what the cluster holds
(checksums of every record, committed offsets, configs, quotas, SCRAM users, ACLs). Then every
broker is stopped cleanly and zk2kraft runs as the README's runbook says:
`plan --offline` (exit 0), `migrate --offline`, `verify --offline`, and `prepare-broker` on each
broker's log dir.

Then 3 KRaft controllers (ids 3000..3002) start on the migrated voter dirs and the same three
brokers start in KRaft mode on their old data dirs (copies, so the 3.9.1 and the 4.4 rehearsal
each start from the same stopped cluster). Kafka's clients must then find every record
identical, committed offsets equal, configs/quotas/SCRAM/ACLs equal and enforced (a wrong SCRAM
password refused, a topic without an ACL refused), a new topic and a reassignment working; the
cluster must be available, not only whole (issue 18): every ISR full within IN_SYNC_BOUND_S of
the last broker's start (the time is printed), no under-replicated partition, acks=all writes
to a min.insync.replicas=2 topic, a transactional producer's InitProducerId, a preferred leader
election; and no controller or broker may log an ERROR line (none is expected: our
quorum-state names no leader, the log names no broker and no partition leader, and `zk2kraft
prepare-broker` gives each broker's log dir the directory.id the log names for its replicas, so
nothing of ours can be stale at first start).

The expected values are what Kafka's own clients said before the stop, never zk2kraft's output.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.kafka import KafkaZkBroker, admin_tool, fill_and_stop, wait_unregistered
from tests.support.kraft import (
    KAFKA_39,
    KafkaDist,
    KraftNode,
    config_command,
    kafka_dist,
    run_tool,
    stray_dirs,
)
from tests.support.ports import free_port

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ConfigResource,
        ConfigResourceType,
        KafkaAdminClient,
        NewTopic,
        ResourcePatternFilter,
        ResourceType,
    )
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata
from confluent_kafka import KafkaException as ConfluentKafkaException
from confluent_kafka import Producer as ConfluentProducer

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.slow,
    # building the ZooKeeper-mode cluster (its module fixture counts towards the first test) plus
    # one KRaft rehearsal: about 5 minutes on a quiet 2-core machine, up to 15 at load average 30
    pytest.mark.timeout(1800),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:kafka"),
]

ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
BROKERS = (1, 2, 3)
# The ZooKeeper-mode brokers stop in this order, each with a controlled shutdown that moves its
# leaderships and ISR places to the brokers still running: the last one stopped (1) leads every
# partition it holds, with itself as the only ISR member. The KRaft brokers are then started
# together, the last one stopped a moment late: the others publish their first metadata image
# before it registers. That is the worst case of "all at once" (issue 18: a follower whose first
# image does not know its partition's leader never fetched from it on Kafka 3.9.1), and made
# certain here, since which JVM comes up first is otherwise chance (one run on this machine had
# broker 1 registered before the others' first image, and every ISR full 3 s after the start).
STOP_ORDER = (3, 2, 1)
# From the moment the last KRaft broker has started: every partition's ISR == its replicas.
IN_SYNC_BOUND_S = 120.0
CONTROLLERS = (3000, 3001, 3002)
PASSWORD = "offline-rehearsal-password"  # noqa: S105 - a test credential
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
GROUP = "rehearsal-app"
TXN_ID = "rehearsal-tx"

TOPICS: dict[str, tuple[int, int, dict[str, str]]] = {  # name -> partitions, RF, configs
    "orders": (6, 3, {"retention.ms": "604800000", "min.insync.replicas": "2"}),
    "compacted": (3, 2, {"cleanup.policy": "compact"}),
    "single": (2, 1, {}),
    "many": (60, 2, {"segment.bytes": "10485760"}),
    "txn": (3, 3, {}),
    "secret": (1, 3, {}),
}
RECORDS = {"orders": 6000, "compacted": 2000, "single": 600, "many": 1800}  # + txn: 300


def _sasl_props() -> dict[str, str]:
    # (with them, what every broker of the rehearsal shares: the dynamic log.cleaner.threads=2
    # restarts the cleaner with a dedupe buffer per thread, 128 MiB by default; kept small so the
    # small test heaps never run out)
    return {
        "log.cleaner.dedupe.buffer.size": "16777216",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "listener.name.sasl.scram-sha-256.sasl.jaas.config": SCRAM_LOGIN,
        "super.users": "User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }


# ----------------------------------------------------------------------------- what clients see


@dataclass
class ClusterView:
    """What Kafka's clients and tools report about the cluster (compared before/after)."""

    checksums: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    offsets: dict[str, int] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    partitions: dict[str, int] = field(default_factory=dict)
    quotas: str = ""
    scram: list[str] = field(default_factory=list)
    acls: list[str] = field(default_factory=list)


def _admin(bootstrap: str) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000)


def _end_offsets(bootstrap: str, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    """Each partition's end offset, asked again (by a new consumer) while the cluster settles.

    Right after the KRaft brokers start, a partition's leader can be a broker that the metadata
    answering the consumer does not list yet: kafka-python 3.0.12 then raises
    UnknownBrokerIdError (one CI run on f565f58, broker 1, after every partition had a leader).
    A fresh consumer asks for fresh metadata; 60 s is far past the brokers' own start-up.
    """
    deadline = time.monotonic() + 60
    while True:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed",
                                 enable_auto_commit=False, request_timeout_ms=30_000)
        try:
            return dict(consumer.end_offsets(tps))
        except KafkaError as exc:
            if time.monotonic() > deadline:
                raise AssertionError(f"end offsets of {tps[0].topic}: {exc!r}") from exc
            time.sleep(1)
        finally:
            consumer.close()


def _read_all(bootstrap: str, topic: str, partitions: int) -> tuple[str, int]:
    """A checksum of every committed record of `topic`: partition, offset, key, value, time."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    ends = _end_offsets(bootstrap, tps)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             isolation_level="read_committed", request_timeout_ms=60_000,
                             consumer_timeout_ms=20_000, max_poll_records=5000)
    try:
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        rows: list[tuple[int, int, bytes, bytes, int]] = []
        done = {tp for tp in tps if ends[tp] == 0}
        deadline = time.monotonic() + 180
        while len(done) < len(tps):
            assert time.monotonic() < deadline, f"{topic}: could not read to the end {ends}"
            for tp, batch in consumer.poll(timeout_ms=2000).items():
                for r in batch:
                    rows.append((tp.partition, r.offset, r.key or b"", r.value or b"",
                                 r.timestamp))
            for tp in tps:
                if tp not in done and consumer.position(tp) >= ends[tp]:
                    done.add(tp)
    finally:
        consumer.close()
    rows.sort()
    digest = hashlib.sha256(repr(rows).encode()).hexdigest()
    return digest, len(rows)


def _describe_acls(bootstrap: str) -> list[str]:
    admin = _admin(bootstrap)
    try:
        acls, _ = admin.describe_acls(ACLFilter(
            principal=None, host=None, operation=ACLOperation.ANY,
            permission_type=ACLPermissionType.ANY,
            resource_pattern=ResourcePatternFilter(ResourceType.ANY, None,
                                                   ACLResourcePatternType.ANY)))
    finally:
        admin.close()
    return sorted(f"{a.principal} {a.host} {a.operation.name} {a.permission_type.name} "
                  f"{a.resource_pattern.resource_type.name}:{a.resource_pattern.pattern_type.name}"
                  f":{a.resource_pattern.resource_name}" for a in acls)


def _view(bootstrap: str, dist: KafkaDist) -> ClusterView:
    view = ClusterView()
    for topic, (parts, _, _) in TOPICS.items():
        view.checksums[topic], view.counts[topic] = _read_all(bootstrap, topic, parts)
    admin = _admin(bootstrap)
    try:
        offsets = admin.list_group_offsets({GROUP: None})[GROUP]
        view.offsets = {f"{tp.topic}-{tp.partition}": om.offset for tp, om in offsets.items()}
        resources = [ConfigResource(ConfigResourceType.TOPIC, t) for t in TOPICS]
        # broker 1's dynamic configs include the cluster-wide default ones (their source says
        # DYNAMIC_DEFAULT_BROKER_CONFIG); kafka-python cannot name the default resource itself
        resources.append(ConfigResource(ConfigResourceType.BROKER, "1"))
        described = admin.describe_configs(resources)
        view.topic_configs = {name: _dynamic(cfg) for name, cfg in described["topic"].items()}
        view.broker_configs = {name: _dynamic(cfg) for name, cfg in described["broker"].items()}
        view.partitions = {_name(t): len(t["partitions"]) for t in admin.describe_topics(
            list(TOPICS))}
        view.scram = sorted(f"{user}:{ci['mechanism'].name}:{ci['iterations']}"
                            for user, info in admin.describe_user_scram_credentials().items()
                            for ci in info["credential_infos"])
    finally:
        admin.close()
    view.quotas = _quotas(bootstrap, dist)
    view.acls = _describe_acls(bootstrap)
    return view


_DYNAMIC_SOURCES = {"DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG",
                    "DYNAMIC_DEFAULT_BROKER_CONFIG"}


def _dynamic(configs: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The dynamic configs (stored in ZooKeeper / the metadata log), not server.properties."""
    return {k: str(v.get("value")) for k, v in configs.items()
            if v.get("config_source") in _DYNAMIC_SOURCES}


def _name(topic: dict[str, Any]) -> str:
    return str(topic.get("topic", topic.get("name")))


def _partitions(topic: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"partition": p.get("partition", p.get("partition_index")),
             "leader": p.get("leader", p.get("leader_id")),
             "replicas": list(p.get("replicas", p.get("replica_nodes", [])))}
            for p in topic["partitions"]]


def _quotas(bootstrap: str, dist: KafkaDist) -> str:
    out = run_tool(dist, config_command(dist), "--bootstrap-server", bootstrap,
                   "--describe", "--entity-type", "users", "--entity-type", "clients").stdout
    return "\n".join(sorted(ln.strip() for ln in out.splitlines() if ln.strip()))


# ----------------------------------------------------------------------------- the ZK cluster


def _populate(bootstrap: str) -> None:
    admin = _admin(bootstrap)
    try:
        admin.create_topics([NewTopic(t, p, rf, topic_configs=c)
                             for t, (p, rf, c) in TOPICS.items()], timeout_ms=120_000)
    finally:
        admin.close()
    config = ("kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--alter")
    admin_tool(*config, "--entity-type", "users", "--entity-name", "alice", "--add-config",
               f"SCRAM-SHA-256=[iterations=4096,password={PASSWORD}]")
    admin_tool(*config, "--entity-type", "users", "--entity-name", "alice", "--add-config",
               "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    admin_tool(*config, "--entity-type", "users", "--entity-name", "bob", "--add-config",
               f"SCRAM-SHA-256=[password={PASSWORD}]")
    admin_tool(*config, "--entity-type", "clients", "--entity-default",
               "--add-config", "request_percentage=50")
    admin_tool(*config, "--entity-type", "brokers", "--entity-default",
               "--add-config", "log.cleaner.threads=2")
    admin_tool(*config, "--entity-type", "brokers", "--entity-name", "1",
               "--add-config", "log.cleaner.io.buffer.size=1048576")
    acl = ("kafka.admin.AclCommand", "--bootstrap-server", bootstrap, "--add", "--force")
    admin_tool(*acl, "--allow-principal", "User:alice", "--operation", "Read",
               "--operation", "Describe", "--topic", "orders")
    admin_tool(*acl, "--allow-principal", "User:alice", "--operation", "Read",
               "--group", "rehearsal-", "--resource-pattern-type", "prefixed")
    admin_tool(*acl, "--allow-principal", "User:bob", "--operation", "Write",
               "--operation", "Describe", "--topic", "orders")
    _produce(bootstrap)


def _produce(bootstrap: str) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                             request_timeout_ms=60_000, enable_idempotence=True)
    try:
        for topic, n in RECORDS.items():
            keys = 97 if topic == "compacted" else n
            for i in range(n):
                producer.send(topic, key=f"{topic}-key-{i % keys}".encode(),
                              value=f"{topic} value {i} ".encode() * (1 + i % 7))
        producer.flush(timeout=120)
    finally:
        producer.close(timeout=30)
    produce_transactions(bootstrap, TXN_ID, 100)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP,
                             enable_auto_commit=False, request_timeout_ms=60_000)
    try:
        commits = {TopicPartition("orders", p): OffsetAndMetadata(100 + 37 * p, "", -1)
                   for p in range(TOPICS["orders"][0])}
        commits[TopicPartition("txn", 0)] = OffsetAndMetadata(5, "", -1)
        consumer.commit(commits)
    finally:
        consumer.close()


def produce_transactions(bootstrap: str, transactional_id: str, per_batch: int) -> None:
    """Four transactions of `per_batch` records to topic `txn`; the third is aborted, so
    read_committed readers see 3 x `per_batch` records."""
    tx = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=transactional_id,
                       acks="all", request_timeout_ms=60_000)
    try:
        tx.init_transactions()
        for batch in range(4):
            tx.begin_transaction()
            for i in range(per_batch):
                tx.send("txn", key=f"tx-{batch}-{i}".encode(), value=f"batch {batch}".encode())
            if batch == 2:
                tx.abort_transaction()  # read_committed readers never see batch 2
            else:
                tx.commit_transaction()
    finally:
        tx.close(timeout=30)


@dataclass
class StoppedCluster:
    """The ZooKeeper-mode cluster after its clean stop, and what clients saw before it."""

    connect: str
    data: dict[int, Path]
    before: ClusterView
    zk: KazooClient


def _zk_broker(root: Path, connect: str, broker_id: int) -> KafkaZkBroker:
    return KafkaZkBroker(root / f"zk-broker{broker_id}", connect, broker_id=broker_id,
                         listeners={"SASL": "SASL_PLAINTEXT"}, heap="256m", extra={
        **_sasl_props(),
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "offsets.topic.replication.factor": "3",
        "transaction.state.log.replication.factor": "3",
        "transaction.state.log.min.isr": "2",
        "default.replication.factor": "3",
        "controlled.shutdown.enable": "true",
    })


@pytest.fixture(scope="module")
def stopped_cluster(tmp_path_factory: pytest.TempPathFactory, zk_server: Any,
                    _zk_admin: KazooClient) -> Iterator[StoppedCluster]:
    root = tmp_path_factory.mktemp("zk-cluster")
    chroot = f"/offline_{os.getpid()}_{int(time.time() * 1000)}"
    _zk_admin.ensure_path(chroot)
    connect = f"{zk_server.connect}{chroot}"
    brokers = [_zk_broker(root, connect, b) for b in BROKERS]

    def fill(bootstrap: str) -> ClusterView:
        _populate(bootstrap)
        return _view(bootstrap, KAFKA_39)

    before = fill_and_stop(brokers, STOP_ORDER, fill)
    zk = KazooClient(hosts=connect)
    zk.start(timeout=30)
    try:
        wait_unregistered(zk)
        yield StoppedCluster(connect, {b.broker_id: b.workdir / "data" for b in brokers},
                             before, zk)
    finally:
        zk.stop()
        zk.close()


# ----------------------------------------------------------------------------- zk2kraft + KRaft


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ZK2KRAFT, *args], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "200"}, cwd=cwd)


def _ok(proc: subprocess.CompletedProcess[str], what: str) -> None:
    assert proc.returncode == 0, (f"{what} exited {proc.returncode}\n--- stdout ---\n"
                                  f"{proc.stdout[-6000:]}\n--- stderr ---\n{proc.stderr[-6000:]}")


def _tree(zk: KazooClient, path: str = "/") -> dict[str, tuple[int, int]]:
    _, st = zk.get(path)
    out = {path: (st.mzxid, st.pzxid)}
    for child in zk.get_children(path):
        out.update(_tree(zk, path.rstrip("/") + "/" + child))
    return out


def _migrate_offline(cluster: StoppedCluster, root: Path, *target: str) -> dict[int, Path]:
    before = _tree(cluster.zk)
    voters = {c: root / f"controller{c}" for c in CONTROLLERS}
    flags = [f"--voter={c}={d}" for c, d in voters.items()]
    plan = _cli("plan", "--zookeeper", cluster.connect, "--offline", *target,
                "--json", str(root / "plan.json"))
    _ok(plan, "zk2kraft plan --offline")
    doc = json.loads((root / "plan.json").read_text())
    assert doc["blockers"] == [] and doc["brokers"] == 0, doc
    _ok(_cli("migrate", "--zookeeper", cluster.connect, "--offline", *target, *flags,
             "--json", str(root / "migrate.json")), "zk2kraft migrate --offline")
    verify = _cli("verify", "--zookeeper", cluster.connect, "--offline", *flags,
                  "--json", str(root / "verify.json"))
    _ok(verify, "zk2kraft verify --offline")
    assert json.loads((root / "verify.json").read_text())["parity"] is True
    assert _tree(cluster.zk) == before  # touched nothing in ZooKeeper
    return voters


def _kraft_props() -> dict[str, str]:
    return {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS"}


@dataclass
class KraftStart:
    """The KRaft nodes of one rehearsal and when its brokers were launched and had started."""

    controllers: list[KraftNode]
    brokers: list[KraftNode]
    launched: float  # time.monotonic() when the brokers were launched
    started: float  # ... and when the last of them logged "Kafka Server started"


def _start_kraft(dist: KafkaDist, cluster: StoppedCluster, voters: dict[int, Path],
                 root: Path) -> KraftStart:
    quorum = {c: free_port() for c in CONTROLLERS}
    controllers = [KraftNode(root / f"kraft-controller{c}", dist, node_id=c, role="controller",
                             quorum=quorum, log_dirs=voters[c], extra=_kraft_props())
                   for c in CONTROLLERS]
    brokers = []
    for b in BROKERS:
        data = root / f"data{b}"
        shutil.copytree(cluster.data[b], data)
        # What Kafka 2.8 left (issue 29): partition directories without partition.metadata,
        # which a KRaft broker renames away as stray. Broker 1's are all removed here, and the
        # single-replica topic's on every broker (its records have no other copy);
        # prepare-broker must write each from ZooKeeper's topic id, byte for byte as Kafka
        # 3.9.1 itself wrote it, and every record must be there after the start.
        removed = {}
        for pm in sorted(data.glob("*-*/partition.metadata")):
            if b == BROKERS[0] or pm.parent.name.startswith("single-"):
                removed[pm] = pm.read_bytes()
                pm.unlink()
        # the runbook's step on each broker host: every partition directory is checked against
        # the migrated topic ids (a missing partition.metadata written), and the first log dir
        # gets the directory.id the migrated log names for the broker's replicas
        prepared = _cli("prepare-broker", "--log-dirs", str(data), "--zookeeper", cluster.connect)
        _ok(prepared, f"zk2kraft prepare-broker ({b})")
        assert {pm: pm.read_bytes() for pm in removed} == removed
        assert f", {len(removed)} partition.metadata written, 0 refused" in prepared.stdout
        brokers.append(KraftNode(root / f"kraft-broker{b}", dist, node_id=b, role="broker",
                                 quorum=quorum, log_dirs=data, listeners={"SASL": "SASL_PLAINTEXT"},
                                 heap="448m",
                                 extra={**_kraft_props(), **_sasl_props(),
                                        "offsets.topic.replication.factor": "3",
                                        "transaction.state.log.replication.factor": "3",
                                        "transaction.state.log.min.isr": "2",
                                        "group.initial.rebalance.delay.ms": "0"}))
    # the runbook's order: the controllers first (they elect a leader among themselves), then
    # every broker, which register with it; the last one stopped launched as the others
    # publish their first metadata image (STOP_ORDER says why)
    for node in controllers:
        node.launch()
    for node in controllers:
        node.wait_started()
    launched = time.monotonic()
    late = next(n for n in brokers if n.node_id == STOP_ORDER[-1])
    early = [n for n in brokers if n is not late]
    for node in early:
        node.launch()
    for node in early:
        node.wait_for_log(r"Publishing initial metadata at offset", timeout=180)
    late.launch()
    for node in brokers:
        node.wait_started()
    return KraftStart(controllers, brokers, launched, time.monotonic())


def _wait(check: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f}s"
        time.sleep(0.5)  # polling a cluster we do not control


def _all_led(bootstrap: str) -> bool:
    admin = _admin(bootstrap)
    try:
        topics = admin.describe_topics(list(TOPICS))
    except KafkaError:
        return False
    finally:
        admin.close()
    return len(topics) == len(TOPICS) and all(
        p["leader"] >= 0 for t in topics for p in _partitions(t))


def _not_in_sync(bootstrap: str) -> list[str]:
    """Every partition (internal topics included) whose ISR is not its replica set, as
    `topic-partition leader L replicas [..] isr [..]`; ["describe: <error>"] if asking failed."""
    admin = _admin(bootstrap)
    try:
        topics = admin.describe_topics()
    except KafkaError as exc:
        return [f"describe: {exc!r}"]
    finally:
        admin.close()
    out = []
    for t in topics:
        for p in t["partitions"]:
            replicas = list(p.get("replicas", p.get("replica_nodes", [])))
            isr = list(p.get("isr", p.get("isr_nodes", [])))
            if sorted(isr) != sorted(replicas):
                out.append(f"{_name(t)}-{p.get('partition', p.get('partition_index'))} leader "
                           f"{p.get('leader', p.get('leader_id'))} replicas {replicas} isr {isr}")
    return sorted(out)


def _wait_in_sync(bootstrap: str, start: KraftStart, dist: KafkaDist) -> list[str]:
    """Wait until every partition's ISR is its replica set, at most IN_SYNC_BOUND_S after the
    last broker started; the problems found (none when in sync in time)."""
    deadline = start.started + IN_SYNC_BOUND_S
    while True:
        lagging = _not_in_sync(bootstrap)
        now = time.monotonic()
        if not lagging:
            # the figure docs/benchmarks.md records ("The offline rehearsal's availability
            # checks"): how long after the brokers' launch (and after their start) every ISR was
            # full again
            print(f"\nKafka {dist.version}: ISR == replicas {now - start.launched:.1f} s after "
                  f"the brokers' launch, {now - start.started:.1f} s after the last started")
            return []
        if now > deadline:
            return [f"{len(lagging)} partitions with ISR != replicas {IN_SYNC_BOUND_S:.0f} s "
                    f"after every broker started:\n  " + "\n  ".join(lagging[:40])]
        time.sleep(1)  # polling a cluster we do not control


def _availability(bootstrap: str, dist: KafkaDist) -> list[str]:
    """What clients need from a whole cluster, asked with Kafka's own tools and clients."""
    problems = []
    # Kafka's own judgement of what _wait_in_sync saw (one tool run: an under-min-ISR or
    # unavailable partition is under-replicated too)
    listed = run_tool(dist, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                      bootstrap, "--describe", "--under-replicated-partitions").stdout.strip()
    if listed:
        problems.append(f"kafka-topics --describe --under-replicated-partitions:\n"
                        f"{listed[:3000]}")
    # acks=all to a topic with min.insync.replicas=2 needs 2 replicas in sync
    failed: list[str] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(str(err))

    producer = ConfluentProducer({"bootstrap.servers": bootstrap, "acks": "all",
                                  "message.timeout.ms": 60_000})
    for i in range(100):
        producer.produce("orders", key=f"after-{i}".encode(), value=b"acks=all",
                         on_delivery=delivered)
    left = producer.flush(90)
    if failed or left:
        problems.append(f"acks=all to orders (min.insync.replicas=2): {len(failed)} failed "
                        f"({sorted(set(failed))[:3]}), {left} undelivered")
    # a transactional producer: InitProducerId goes through __transaction_state (min ISR 2)
    tx = ConfluentProducer({"bootstrap.servers": bootstrap,
                            "transactional.id": "after-migration-tx",
                            "transaction.timeout.ms": 60_000})
    try:
        tx.init_transactions(90)
        tx.begin_transaction()
        tx.produce("txn", key=b"after", value=b"committed after the migration")
        tx.commit_transaction(90)
    except ConfluentKafkaException as exc:
        problems.append(f"transactional producer: {exc}")
    # a preferred leader election: refused (PreferredLeaderNotAvailable) while a preferred
    # leader is out of the ISR; the tool exits 1 when any partition could not be elected
    try:
        run_tool(dist, "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server",
                 bootstrap, "--election-type", "PREFERRED", "--all-topic-partitions")
    except AssertionError as exc:
        problems.append(f"preferred leader election: {exc}")
    return problems


def _sasl_read(broker: KraftNode, password: str, topic: str) -> str:
    """Read one record of `topic` as SCRAM user alice: "ok", or the error's class name."""
    sasl = f"127.0.0.1:{broker.listener_ports['SASL']}"
    consumer = None
    try:
        consumer = KafkaConsumer(bootstrap_servers=sasl, security_protocol="SASL_PLAINTEXT",
                                 sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="alice",
                                 sasl_plain_password=password, request_timeout_ms=30_000,
                                 enable_auto_commit=False)
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if consumer.poll(timeout_ms=2000).get(tp):
                return "ok"
        return "no record within 60s"
    except Exception as exc:  # noqa: BLE001 - the refusal is the expected outcome
        return type(exc).__name__
    finally:
        if consumer is not None:
            consumer.close()


def _check_scram_and_acls(broker: KraftNode) -> list[str]:
    problems = []
    allowed = _sasl_read(broker, PASSWORD, "orders")  # SCRAM login + ACL Read on orders
    if allowed != "ok":
        problems.append(f"alice could not read orders with her password: {allowed}")
    wrong = _sasl_read(broker, "wrong-password", "orders")
    if wrong == "ok":
        problems.append("a wrong SCRAM password was accepted")
    denied = _sasl_read(broker, PASSWORD, "secret")  # no ACL for alice on secret
    if denied == "ok":
        problems.append("alice read 'secret' without an ACL")
    return problems


def _new_topic_and_reassignment(bootstrap: str, dist: KafkaDist, root: Path) -> None:
    admin = _admin(bootstrap)
    try:
        admin.create_topics([NewTopic("after-migration", 3, 2)], timeout_ms=120_000)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=60_000)
    try:
        producer.send("after-migration", key=b"k", value=b"v").get(timeout=60)
    finally:
        producer.close(timeout=30)
    plan = root / "reassign.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "single", "partition": 0, "replicas": [2, 3]},
        {"topic": "orders", "partition": 1, "replicas": [3, 1, 2]},
    ]}))
    tool = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
    run_tool(dist, tool, "--bootstrap-server", bootstrap, "--reassignment-json-file",
             str(plan), "--execute")

    def done() -> bool:
        out = run_tool(dist, tool, "--bootstrap-server", bootstrap,
                       "--reassignment-json-file", str(plan), "--verify").stdout
        return "is completed" in out and "still in progress" not in out

    _wait(done, "the reassignment completes", timeout=180)
    admin = _admin(bootstrap)
    try:
        meta = {_name(t): t for t in admin.describe_topics(["single", "orders"])}
    finally:
        admin.close()
    single0 = next(p for p in _partitions(meta["single"]) if p["partition"] == 0)
    assert sorted(single0["replicas"]) == [2, 3]


def _registration_race(entry: str) -> bool:
    return ("apiKey=CONTROLLER_REGISTRATION" in entry
            and "NotControllerException: The active controller appears to be node" in entry)


def _directory_id(data: Path) -> str | None:
    for line in (data / "meta.properties").read_text().splitlines():
        if line.startswith("directory.id="):
            return line.partition("=")[2]
    return None


def _rehearse(dist: KafkaDist, cluster: StoppedCluster, root: Path, *target: str) -> None:
    voters = _migrate_offline(cluster, root, *target)
    start = _start_kraft(dist, cluster, voters, root)
    controllers, brokers = start.controllers, start.brokers
    prepared = {b: _directory_id(root / f"data{b}") for b in BROKERS}
    assert all(prepared.values()), prepared
    problems: list[str] = []
    try:
        bootstrap = brokers[0].bootstrap_servers
        _wait(lambda: _all_led(bootstrap), "every partition has a leader again")
        # a replica Kafka could not match to the log's topic id is renamed away and restarted
        # empty (issue 29: 2.8's logs without partition.metadata); none may be
        problems += [f"broker {b}: -stray directories {stray_dirs(root / f'data{b}')[:8]}"
                     for b in BROKERS if stray_dirs(root / f"data{b}")]
        # availability, not only data (issue 18): with no rolling restart, every ISR fills
        problems += _wait_in_sync(bootstrap, start, dist)
        after = _view(bootstrap, dist)
        before = cluster.before
        assert sum(before.counts.values()) >= 10_000 + 300
        for what in ("counts", "checksums", "offsets", "topic_configs", "broker_configs",
                     "partitions", "quotas", "scram", "acls"):
            if getattr(after, what) != getattr(before, what):
                problems.append(f"{what}: before {getattr(before, what)!r}\n"
                                f"        after  {getattr(after, what)!r}")
        problems += _check_scram_and_acls(brokers[0])
        problems += _availability(bootstrap, dist)
        first_start = {n.node_id: n.mark() for n in controllers + brokers}
        _new_topic_and_reassignment(bootstrap, dist, root)
        later = {n.node_id: n.mark() for n in controllers + brokers}
    finally:
        for node in brokers + controllers:
            node.stop(timeout=60)
    # From the first start until every check above passed: not one ERROR line caused by our
    # values (quorum-state, the log: read then and never again). Issue 10 saw two: a quorum-state
    # naming voter 3000 leader of epoch 1 made the first election answer NotControllerException,
    # and registrations with epoch = czxid made brokers hit STALE_BROKER_EPOCH. Ours names no
    # leader (every voter starts Unattached in epoch 1), the log names no broker, and its
    # PartitionRecords name the directory each replica's broker has (prepare-broker).
    # One ERROR is Kafka's own and is let through: a controller elected on a non-empty log
    # publishes the loaded image (so the controllers send their ControllerRegistration) before
    # its QuorumController has finished replaying that log and become active; requests in that
    # gap get NotControllerException, which ControllerApis logs at ERROR, and are retried. Kafka
    # logs it on its own logs too (benchmarks/kraft_restart_race.py: a cluster Kafka formatted,
    # filled and restarted logged it on 6 of 7 starts, 3.9.1 and 4.1.1, even on a freshly
    # formatted log; docs/design/offline.md). The registrations must then succeed, checked below.
    start_logs = {n.node_id: n.log_text()[:first_start[n.node_id]] for n in controllers + brokers}
    for c in CONTROLLERS:  # (a graceful stop resigns a leader, so only the start is looked at)
        assert "Completed transition to Unattached" in start_logs[c], c
        assert "Epoch from quorum store file" not in start_logs[c], c
        assert "Resigned" not in start_logs[c], c
    # Brokers whose replicas' directories the log named wrongly (or not at all: MIGRATING)
    # report each one (AssignReplicasToDirs) while their first metadata image has no broker
    # epoch yet (-1), and get STALE_BROKER_EPOCH, ERROR on both sides; every run did so before
    # the log named the directory.id that prepare-broker gives the first log dir.
    # Whether the stale epoch shows depends on timing; that a broker reports directories at all
    # does not: it must find every replica already in the directory the log names.
    for node_id, text in start_logs.items():
        stale = [ln for ln in text.splitlines() if "STALE_BROKER_EPOCH" in ln]
        assert not stale, (node_id, stale[:3])
        reported = [ln for ln in text.splitlines() if "maybeSendAssignments: sending" in ln]
        assert not reported, (node_id, reported[:3])
    strays = [p.name for b in BROKERS for p in (root / f"data{b}").iterdir()
              if p.name.endswith("-stray")]
    assert strays == []  # no partition directory was renamed away (issue 29)
    kept = {b: _directory_id(root / f"data{b}") for b in BROKERS}
    assert kept == prepared  # Kafka kept the prepared directory.id (it adds one only if none)
    registered = [ln for c in CONTROLLERS for ln in start_logs[c].splitlines()
                  if "Replayed RegisterControllerRecord" in ln]  # "contaning" in 3.9.1
    for c in CONTROLLERS:
        assert any(f"ControllerRegistration(id={c}," in ln for ln in registered), c
    errors = {n.node_id: [e for e in n.errors(until=first_start[n.node_id])
                          if not _registration_race(e)]
              for n in controllers + brokers}
    if any(errors.values()):
        problems.append("ERROR lines at first start:\n" + json.dumps(errors, indent=1)[:8000])
    # While the reassignment runs, Kafka itself logs one ERROR per replica it adds to a broker
    # that never held the partition ("Expected partition X with topic id Y to exist, but it was
    # missing. Creating...", ReplicaManager, as on any KRaft cluster); nothing else may appear.
    later_errors = {n.node_id: [e for e in n.errors(first_start[n.node_id], later[n.node_id])
                                if "to exist, but it was missing. Creating..." not in e]
                    for n in controllers + brokers}
    if any(later_errors.values()):
        problems.append("ERROR lines after the first start:\n"
                        + json.dumps(later_errors, indent=1)[:8000])
    assert not problems, "\n".join(problems)


def test_offline_to_kafka_3_9(stopped_cluster: StoppedCluster, tmp_path: Path) -> None:
    _rehearse(KAFKA_39, stopped_cluster, tmp_path)


def test_offline_straight_to_kafka_4_4(stopped_cluster: StoppedCluster, tmp_path: Path) -> None:
    """The version matrix's newest-to-newest cell (3.9.1 -> 4.4.0) in CI, with this module's
    checks (docs/matrix.md; test_version_matrix runs the other cells)."""
    _rehearse(kafka_dist("4.4"), stopped_cluster, tmp_path, "--target-kafka", "4.4")
