"""The version matrix: a stopped ZooKeeper-mode cluster of one Kafka release comes back, offline,
as a KRaft cluster of another, following `zk2kraft plan --offline`'s printed sequence.

One runner, parameterised by source and target line. For a source (2.8, 3.0 ... 3.9) it starts
two ZooKeeper-mode brokers of that release (`tests/kafka/fetch.sh LINE` caches its jars) and
fills them with that release's own tools and Kafka's clients: a replicated topic with
min.insync.replicas=2, a replication-factor-1 topic with partitions on both brokers (the case
that lost every record of a partition from 2.8 to 4.4: issue 29), a compacted and a
transactional topic (one transaction aborted), a consumer group's committed offsets, SCRAM users,
quotas, dynamic broker and topic configs and ACLs (ConfigCommand and AclCommand of the source).
What Kafka's clients read before the stop is the expected value of every check.

The brokers stop cleanly, and the sequence `plan --offline --target-kafka T --voter ...
--json` prints is followed as printed: its `plan`, `migrate` and `verify` commands run word for
word, `prepare-broker` on each broker's log dir, one controller and both brokers of the target
release start with the printed properties (only the values an operator supplies filled in:
addresses, listener maps, super users). Then, with the target's own tools and Kafka's clients:
every partition's records identical (count and content, the rf=1 partitions included), every
ISR full, the preferred leaders elected, the group's offsets, configs, quotas, SCRAM users and
ACLs equal, SCRAM authenticates and refuses a wrong password, acks=all to the min-ISR-2 topic,
a new topic works, a rolling restart of the brokers comes back whole (records read again), the
source's transactional id goes on (`kafka-transactions.sh describe` knows it, a producer with it
commits a fifth transaction under the same producer id, a higher epoch), and no `-stray`
directory on any broker's disk (Kafka renames a partition directory whose topic id
it cannot match to `<dir>.<uuid>-stray` and starts it empty).

Cells: `ZK2KRAFT_MATRIX="2.8:4.4 3.6:4.4"` (source:target pairs) selects them; unset, CI's cell
runs (2.8 -> 4.4, oldest to newest; newest to newest, 3.9 -> 4.4, is test_offline_rehearsal's).
`scripts/matrix.sh` runs a row or the full matrix, one source at a time; docs/matrix.md holds
the results.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.oracle.test_offline_rehearsal import (
    _admin,
    _cli,
    _describe_acls,
    _dynamic,
    _end_offsets,
    _name,
    _not_in_sync,
    _ok,
    _partitions,
    _sasl_props,
    _sasl_read,
    _wait,
    produce_transactions,
)
from tests.support.kafka import KafkaZkBroker, fill_and_stop, wait_unregistered
from tests.support.kraft import (
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
    from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
    from kafka.structs import OffsetAndMetadata
from confluent_kafka import Producer as ConfluentProducer

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.slow,
    pytest.mark.timeout(1800),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:kafka"),
]

MATRIX_ENV = "ZK2KRAFT_MATRIX"
# 2.8 -> 4.4, oldest to newest; newest to newest (3.9 -> 4.4) runs in CI as
# test_offline_rehearsal.py's test_offline_straight_to_kafka_4_4, on the cluster it builds anyway
CI_CELLS = ("2.8:4.4",)
# the target lines `--target-kafka` takes (each with its release's metadata.version)
TARGET_FLAG = {line: line for line in ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")}
BROKERS = (1, 2)
STOP_ORDER = (2, 1)
CONTROLLER = 3000
PASSWORD = "matrix-rehearsal-password"  # noqa: S105 - a test credential
GROUP = "matrix-app"
TRANSACTIONAL_ID = "matrix-tx"  # four transactions at the source, a fifth after the migration
# name -> partitions, replication factor, topic configs; "rf1" has 2 partitions on each broker
TOPICS: dict[str, tuple[int, int, dict[str, str]]] = {
    "replicated": (3, 2, {"min.insync.replicas": "2", "retention.ms": "604800000"}),
    "rf1": (4, 1, {}),
    "compacted": (2, 2, {"cleanup.policy": "compact"}),
    "txn": (2, 2, {}),
    "secret": (1, 2, {}),
}
RECORDS = {"replicated": 1200, "rf1": 1000, "compacted": 400}  # + txn: 3 committed of 4 x 50
IN_SYNC_BOUND_S = 120.0


def _cells() -> list[tuple[str, str]]:
    raw = os.environ.get(MATRIX_ENV, "").split() or list(CI_CELLS)
    cells = []
    for cell in raw:
        source, _, target = cell.partition(":")
        assert source and target in TARGET_FLAG, f"{MATRIX_ENV}: {cell!r} is not SOURCE:TARGET"
        cells.append((source, target))
    return cells


# ----------------------------------------------------------------------------- what clients see


@dataclass
class Seen:
    """What Kafka's clients and tools report (compared before the stop and after the start)."""

    records: dict[str, tuple[int, str]] = field(default_factory=dict)  # topic-p -> n, sha256
    offsets: dict[str, int] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    quotas: list[str] = field(default_factory=list)
    scram: list[str] = field(default_factory=list)
    acls: list[str] = field(default_factory=list)
    # `plan --bootstrap-server` on the running source: broker -> (kafka_at_least, kafka_before)
    lines: dict[int, tuple[str | None, str | None]] = field(default_factory=dict)


def _read_partitions(bootstrap: str, topic: str, partitions: int) -> dict[str, tuple[int, str]]:
    """Each partition's committed records as (count, sha256 of offset, key, value, time)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    ends = _end_offsets(bootstrap, tps)  # asked again while a leader is not listed yet
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                             isolation_level="read_committed", request_timeout_ms=60_000,
                             max_poll_records=5000)
    rows: dict[int, list[tuple[int, bytes, bytes, int]]] = {p: [] for p in range(partitions)}
    try:
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        done = {tp for tp in tps if ends[tp] == 0}
        deadline = time.monotonic() + 180
        while len(done) < len(tps):
            assert time.monotonic() < deadline, f"{topic}: could not read to the end {ends}"
            for tp, batch in consumer.poll(timeout_ms=2000).items():
                rows[tp.partition] += [(r.offset, r.key or b"", r.value or b"", r.timestamp)
                                       for r in batch]
            done |= {tp for tp in tps if consumer.position(tp) >= ends[tp]}
    finally:
        consumer.close()
    return {f"{topic}-{p}": (len(r), hashlib.sha256(repr(sorted(r)).encode()).hexdigest())
            for p, r in rows.items()}


def _quotas(bootstrap: str, dist: KafkaDist) -> list[str]:
    """The client quotas as `entity key=value` facts (each release words its lines its own way:
    the entity names in quotes and the key=value pairs are what every one prints)."""
    out = run_tool(dist, config_command(dist), "--bootstrap-server", bootstrap, "--describe",
                   "--entity-type", "users", "--entity-type", "clients").stdout
    facts = []
    for line in out.splitlines():
        entity = ",".join(re.findall(r"'([^']*)'", line)) or "<default>"
        for key, value in re.findall(r"(\w+)=([0-9.]+)", line):
            facts.append(f"{entity} {key}={float(value)}")
    return sorted(facts)


def _seen(bootstrap: str, dist: KafkaDist) -> Seen:
    seen = Seen()
    for topic, (parts, _, _) in TOPICS.items():
        seen.records.update(_read_partitions(bootstrap, topic, parts))
    admin = _admin(bootstrap)
    try:
        offsets = admin.list_group_offsets({GROUP: None})[GROUP]
        seen.offsets = {f"{tp.topic}-{tp.partition}": om.offset for tp, om in offsets.items()}
        described = admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in TOPICS]
            + [ConfigResource(ConfigResourceType.BROKER, "1")])
        seen.topic_configs = {n: _dynamic(c) for n, c in described["topic"].items()}
        seen.broker_configs = {n: _dynamic(c) for n, c in described["broker"].items()}
        seen.scram = sorted(f"{user}:{ci['mechanism'].name}:{ci['iterations']}"
                            for user, info in admin.describe_user_scram_credentials().items()
                            for ci in info["credential_infos"])
    finally:
        admin.close()
    seen.quotas = _quotas(bootstrap, dist)
    seen.acls = _describe_acls(bootstrap)
    return seen


# ----------------------------------------------------------------------------- the source cluster


def _populate(bootstrap: str, dist: KafkaDist) -> None:
    """Fill the cluster with Kafka's clients and the source release's own ConfigCommand and
    AclCommand."""
    admin = _admin(bootstrap)
    try:
        admin.create_topics([NewTopic(t, p, rf, topic_configs=c)
                             for t, (p, rf, c) in TOPICS.items()], timeout_ms=120_000)
    finally:
        admin.close()
    config = (config_command(dist), "--bootstrap-server", bootstrap, "--alter")
    run_tool(dist, *config, "--entity-type", "users", "--entity-name", "alice", "--add-config",
             f"SCRAM-SHA-256=[iterations=4096,password={PASSWORD}]")
    run_tool(dist, *config, "--entity-type", "users", "--entity-name", "alice", "--add-config",
             "producer_byte_rate=1048576,consumer_byte_rate=2097152")
    run_tool(dist, *config, "--entity-type", "clients", "--entity-default",
             "--add-config", "request_percentage=50")
    run_tool(dist, *config, "--entity-type", "brokers", "--entity-default",
             "--add-config", "log.cleaner.threads=2")
    run_tool(dist, *config, "--entity-type", "brokers", "--entity-name", "1",
             "--add-config", "log.cleaner.io.buffer.size=1048576")
    acl = ("kafka.admin.AclCommand", "--bootstrap-server", bootstrap, "--add", "--force")
    run_tool(dist, *acl, "--allow-principal", "User:alice", "--operation", "Read",
             "--operation", "Describe", "--topic", "replicated")
    run_tool(dist, *acl, "--allow-principal", "User:alice", "--operation", "Read",
             "--group", "matrix-", "--resource-pattern-type", "prefixed")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20,
                             request_timeout_ms=60_000)
    try:
        for topic, n in RECORDS.items():
            keys = 37 if topic == "compacted" else n
            for i in range(n):
                producer.send(topic, key=f"{topic}-key-{i % keys}".encode(),
                              value=f"{topic} value {i} ".encode() * (1 + i % 5))
        producer.flush(timeout=120)
    finally:
        producer.close(timeout=30)
    produce_transactions(bootstrap, TRANSACTIONAL_ID, 50)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=GROUP,
                             enable_auto_commit=False, request_timeout_ms=60_000)
    try:
        consumer.commit({TopicPartition("replicated", p): OffsetAndMetadata(100 + 37 * p, "", -1)
                         for p in range(TOPICS["replicated"][0])})
    finally:
        consumer.close()


@dataclass
class StoppedSource:
    """A source cluster after its clean stop, and what clients saw before it."""

    line: str
    connect: str
    data: dict[int, Path]
    listener_maps: dict[int, str]
    before: Seen
    fill_s: float


_SOURCES: dict[str, StoppedSource] = {}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory, zk_server: Any,
            _zk_admin: KazooClient) -> Iterator[Any]:
    """Build (once per module) the stopped source cluster of a line: `sources(line)`."""

    def build(line: str) -> StoppedSource:
        if line in _SOURCES:
            return _SOURCES[line]
        t0 = time.monotonic()
        dist = kafka_dist(line)
        root = tmp_path_factory.mktemp(f"zk-{line}")
        chroot = f"/matrix_{line.replace('.', '_')}_{os.getpid()}_{int(time.time() * 1000)}"
        _zk_admin.ensure_path(chroot)
        connect = f"{zk_server.connect}{chroot}"
        brokers = [KafkaZkBroker(root / f"zk-broker{b}", connect, broker_id=b, dist=dist,
                                 listeners={"SASL": "SASL_PLAINTEXT"}, heap="320m",
                                 start_timeout=240, extra={
            **_sasl_props(),
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "offsets.topic.replication.factor": "2",
            "transaction.state.log.replication.factor": "2",
            "transaction.state.log.min.isr": "2",
            "default.replication.factor": "2",
            "controlled.shutdown.enable": "true",
        }) for b in BROKERS]

        def fill(bootstrap: str) -> Seen:
            _populate(bootstrap, dist)
            seen = _seen(bootstrap, dist)
            # ApiVersions is answered before authentication: asked on the SASL_PLAINTEXT
            # listener, every registered broker on it
            sasl = f"127.0.0.1:{brokers[0].listener_ports['SASL']}"
            plan = _cli("plan", "--zookeeper", connect, "--bootstrap-server", sasl,
                        "--json", "-")
            doc = json.loads(plan.stdout) if plan.stdout.startswith("{") else {}
            seen.lines = {b["broker"]: (b["kafka_at_least"], b["kafka_before"])
                          for b in doc.get("source", {}).get("brokers", [])}
            # online at the default 3.9-IV0, every broker of an older line blocks, named
            # from its own ApiVersions (a broker cannot run an IBP above its release)
            older = [] if line == "3.9" else [f"/brokers/ids/{b}" for b in BROKERS]
            blocked = [b["path"] for b in doc.get("blockers", [])
                       if b["code"] == "BROKER_OLDER_THAN_METADATA_VERSION"]
            assert (plan.returncode, blocked) == (1 if older else 0, older), (
                f"zk2kraft plan --bootstrap-server on the running source exited "
                f"{plan.returncode}\n{plan.stdout[-4000:]}{plan.stderr[-2000:]}")
            return seen

        before = fill_and_stop(brokers, STOP_ORDER, fill)
        zk = KazooClient(hosts=connect)
        zk.start(timeout=30)
        try:
            wait_unregistered(zk)
        finally:
            zk.stop()
            zk.close()
        source = StoppedSource(line, connect, {b.broker_id: b.workdir / "data" for b in brokers},
                               {b.broker_id: b.properties["listener.security.protocol.map"]
                                for b in brokers}, before, time.monotonic() - t0)
        print(f"\nsource {line}: built, filled and stopped in {source.fill_s:.0f} s")
        _SOURCES[line] = source
        return source

    yield build


# ----------------------------------------------------------------------------- the printed sequence


def _printed_command(action: str, verb: str) -> list[str]:
    """The `zk2kraft VERB ...` command of a printed action, as printed (up to its `:` or `(`
    commentary), split into arguments."""
    m = re.search(rf"zk2kraft ({verb} .*?)(?:: | \(|$)", action)
    assert m, f"no `zk2kraft {verb}` in the printed action {action!r}"
    return m.group(1).split()


def _filled(props: dict[str, str], values: dict[str, str]) -> dict[str, str]:
    """The printed properties with each `<placeholder>` an operator supplies replaced; a
    placeholder left over fails (the sequence asks for something this runner does not know)."""
    out = {}
    for key, value in props.items():
        for placeholder, real in values.items():
            value = value.replace(placeholder, real)
        assert "<" not in value, f"printed {key}={value!r}: a value left to the operator"
        out[key] = value
    return out


def _wait_in_sync(bootstrap: str, since: float) -> float:
    """Wait until every partition's ISR is its replica set; seconds it took from `since`."""
    deadline = time.monotonic() + IN_SYNC_BOUND_S
    while lagging := _not_in_sync(bootstrap):
        assert time.monotonic() < deadline, (
            f"{len(lagging)} partitions with ISR != replicas after {IN_SYNC_BOUND_S:.0f} s:\n  "
            + "\n  ".join(lagging[:30]))
        time.sleep(1)  # polling a cluster we do not control
    return time.monotonic() - since


def _preferred_leaders(bootstrap: str) -> list[str]:
    """Partitions of the test's topics whose leader is not their first replica."""
    admin = _admin(bootstrap)
    try:
        topics = admin.describe_topics(list(TOPICS))
    finally:
        admin.close()
    return sorted(f"{_name(t)}-{p['partition']} leader {p['leader']} replicas {p['replicas']}"
                  for t in topics for p in _partitions(t) if p["leader"] != p["replicas"][0])


def _acks_all(bootstrap: str) -> str:
    """100 acks=all records to the min.insync.replicas=2 topic: "" or what failed."""
    failed: list[str] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(str(err))

    producer = ConfluentProducer({"bootstrap.servers": bootstrap, "acks": "all",
                                  "message.timeout.ms": 60_000})
    for i in range(100):
        producer.produce("replicated", key=f"after-{i}".encode(), value=b"acks=all",
                         on_delivery=delivered)
    left = producer.flush(90)
    return f"{len(failed)} failed {sorted(set(failed))[:3]}, {left} undelivered" \
        if failed or left else ""


def _transaction_state(dist: KafkaDist, bootstrap: str) -> dict[str, str]:
    """`kafka-transactions.sh describe` of the source's transactional id, as the target's own
    TransactionsCommand prints it (a header row, then the values), or {"error": ...}."""
    try:
        out = run_tool(dist, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                       bootstrap, "describe", "--transactional-id", TRANSACTIONAL_ID).stdout
    except AssertionError as exc:  # it names the tool's output
        return {"error": str(exc)[-600:]}
    rows = [line.split() for line in out.splitlines() if line.strip()]
    if len(rows) < 2 or "ProducerId" not in rows[0]:
        return {"error": out[-400:]}
    return dict(zip(rows[0], rows[1], strict=False))


def _transaction_continues(dist: KafkaDist, bootstrap: str) -> str:
    """The source's transactional id, migrated with `__transaction_state`, goes on: the
    coordinator knows it (its producer id, its last transaction committed), a producer with
    that id initialises (the epoch bumped, the same producer id), commits a fifth transaction,
    and read_committed readers see it: "" or what went wrong."""
    before = _transaction_state(dist, bootstrap)
    if before.get("TransactionState") != "CompleteCommit":
        return f"{TRANSACTIONAL_ID} after the migration: {before}"
    tx = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=TRANSACTIONAL_ID,
                       acks="all", request_timeout_ms=60_000)
    try:
        tx.init_transactions()
        tx.begin_transaction()
        for i in range(50):
            tx.send("txn", key=f"tx-after-{i}".encode(), value=b"after the migration")
        tx.commit_transaction()
    finally:
        tx.close(timeout=30)
    after = _transaction_state(dist, bootstrap)
    committed = sum(n for n, _ in _read_partitions(bootstrap, "txn", TOPICS["txn"][0]).values())
    if (after.get("ProducerId") != before["ProducerId"]
            or int(after.get("ProducerEpoch", -1)) <= int(before["ProducerEpoch"])
            or after.get("TransactionState") != "CompleteCommit" or committed != 4 * 50):
        return (f"{TRANSACTIONAL_ID} did not go on: before {before}, after {after}, "
                f"{committed} committed records in txn (expected 200)")
    return ""


def _new_topic(bootstrap: str) -> str:
    """A topic created after the migration takes a record and gives it back: "" or why not."""
    admin = _admin(bootstrap)
    try:
        admin.create_topics([NewTopic("after-migration", 2, 2)], timeout_ms=120_000)
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", request_timeout_ms=60_000)
    try:
        producer.send("after-migration", key=b"k", value=b"new topic", partition=1).get(60)
    finally:
        producer.close(timeout=30)
    got = _read_partitions(bootstrap, "after-migration", 2)
    return "" if got["after-migration-1"][0] == 1 else f"after-migration read back {got}"


@pytest.mark.parametrize(("source", "target"), _cells(),
                         ids=[f"{s}-to-{t}" for s, t in _cells()])
def test_offline_cell(sources: Any, source: str, target: str, tmp_path: Path) -> None:
    cluster: StoppedSource = sources(source)
    # each broker's line, as its ApiVersions told `plan`, is the line the test started
    newer = {"2.8": "3.0", "3.9": None}.get(source, f"3.{int(source.split('.')[1]) + 1}")
    assert cluster.before.lines == {b: (source, newer) for b in BROKERS}, cluster.before.lines
    dist = kafka_dist(target)
    dist.classpath()  # a missing cache fails here, naming its fetch command
    t0 = time.monotonic()
    voter = tmp_path / f"controller{CONTROLLER}"
    flag = TARGET_FLAG[target]
    plan = _cli("plan", "--zookeeper", cluster.connect, "--offline", "--target-kafka", flag,
                "--voter", f"{CONTROLLER}={voter}", "--json", "-")
    _ok(plan, "zk2kraft plan --offline")
    doc = json.loads(plan.stdout)
    assert doc["blockers"] == [], doc["blockers"]
    seq = doc["operator_sequence"]
    steps = {s["title"]: s["actions"] for s in seq["steps"]}
    # the printed commands, word for word, in the printed order
    _ok(_cli(*_printed_command(steps["Plan"][0], "plan"), cwd=tmp_path), "printed plan")
    _ok(_cli(*_printed_command(steps["Migrate"][0], "migrate")), "printed migrate")
    _ok(_cli(*_printed_command(steps["Verify"][0], "verify")), "printed verify")
    data = {}
    for b in BROKERS:
        data[b] = tmp_path / f"data{b}"
        shutil.copytree(cluster.data[b], data[b])  # each cell starts from the stopped source
        (action,) = [a for a in steps["Prepare each broker's log dirs"]
                     if a.startswith(f"on broker {b}'s host")]
        action = action.replace(f"<broker {b}'s log.dirs>", str(data[b]))  # the operator's
        _ok(_cli(*_printed_command(action, "prepare-broker")),
            f"printed prepare-broker (broker {b})")
    migrated_s = time.monotonic() - t0
    port = free_port()
    supplied = {f"<controller {CONTROLLER}'s host:port>": f"127.0.0.1:{port}"}
    (controller_props,) = [dict(c["properties"]) for c in seq["controllers"]
                           if c["node_id"] == CONTROLLER]
    if controller_props.get("super.users", "").startswith("<"):
        controller_props["super.users"] = "User:ANONYMOUS"  # the brokers' principal here
    controller = KraftNode(tmp_path / "kraft-controller", dist, node_id=CONTROLLER,
                           role="controller", quorum={CONTROLLER: port}, log_dirs=voter,
                           extra=_filled(controller_props, supplied), start_timeout=240)
    brokers = []
    for b in BROKERS:
        listener_map = {f"<broker {b}'s listener.security.protocol.map>": cluster.listener_maps[b]}
        (printed,) = [p["properties"] for p in seq["brokers"] if p["broker_id"] == b]
        props = _filled(printed, {**supplied, **listener_map})
        brokers.append(KraftNode(tmp_path / f"kraft-broker{b}", dist, node_id=b, role="broker",
                                 quorum={CONTROLLER: port}, log_dirs=data[b],
                                 listeners={"SASL": "SASL_PLAINTEXT"}, heap="384m",
                                 start_timeout=240, extra={
            **_sasl_props(), "offsets.topic.replication.factor": "2",
            "transaction.state.log.replication.factor": "2",
            "transaction.state.log.min.isr": "2", "group.initial.rebalance.delay.ms": "0",
            **props}))
    problems: list[str] = []
    try:
        controller.start()
        launched = time.monotonic()
        for node in brokers:
            node.launch()
        for node in brokers:
            node.wait_started()
        bootstrap = brokers[0].bootstrap_servers
        in_sync_s = _wait_in_sync(bootstrap, launched)
        # what Kafka renamed away at its first start is gone from the clients' view too, but
        # the directories say it first and plainly
        for b in BROKERS:
            if stray := stray_dirs(data[b]):
                problems.append(f"broker {b}: {len(stray)} -stray directories: {stray[:8]}")
        run_tool(dist, "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server",
                 bootstrap, "--election-type", "PREFERRED", "--all-topic-partitions")
        _wait(lambda: not _preferred_leaders(bootstrap), "every preferred leader leads", 60)
        after = _seen(bootstrap, dist)
        problems += _differences(cluster.before, after)
        if _sasl_read(brokers[0], PASSWORD, "replicated") != "ok":
            problems.append("alice could not read with her SCRAM password")
        if _sasl_read(brokers[0], "wrong-password", "replicated") == "ok":
            problems.append("a wrong SCRAM password was accepted")
        if failed := _acks_all(bootstrap):
            problems.append(f"acks=all to replicated (min.insync.replicas=2): {failed}")
        if failed := _new_topic(bootstrap):
            problems.append(failed)
        checked_s = time.monotonic() - launched
        # a rolling restart, one broker at a time, each back in sync before the next
        t_roll = time.monotonic()
        for node in brokers:
            node.restart()
            _wait_in_sync(brokers[0].bootstrap_servers if node is not brokers[0]
                          else brokers[1].bootstrap_servers, time.monotonic())
        rolled = {k: v for k, v in _seen(bootstrap, dist).records.items()
                  if not k.startswith("replicated-")}  # it took the acks=all records
        expected = {k: v for k, v in cluster.before.records.items() if k in rolled}
        if rolled != expected:
            problems.append(f"after the rolling restart: records {rolled} != {expected}")
        for b in BROKERS:
            if stray := stray_dirs(data[b]):
                problems.append(f"broker {b} after the rolling restart: -stray {stray[:8]}")
        roll_s = time.monotonic() - t_roll
        # after the roll's comparison of every record with the source's: it adds records
        if failed := _transaction_continues(dist, bootstrap):
            problems.append(failed)
    finally:
        for node in [*brokers, controller]:
            node.stop(timeout=60)
    logged_stray = [f"broker {n.node_id}: {ln[:200]}" for n in brokers
                    for ln in n.all_logs_text().splitlines() if "treat it as a stray" in ln]
    if logged_stray:
        problems.append(f"{len(logged_stray)} stray logs:\n  " + "\n  ".join(logged_stray[:6]))
    print(f"\ncell {source} -> {target}: source built {cluster.fill_s:.0f} s; plan..prepare "
          f"{migrated_s:.0f} s; ISR full {in_sync_s:.1f} s after the brokers' launch; checks "
          f"{checked_s:.0f} s; rolling restart {roll_s:.0f} s; cell "
          f"{time.monotonic() - t0:.0f} s")
    assert not problems, "\n".join(problems)


def _differences(before: Seen, after: Seen) -> list[str]:
    out = []
    lost = {tp: (b, after.records.get(tp)) for tp, b in before.records.items()
            if after.records.get(tp) != b}
    if lost:
        out.append("partitions whose records differ (count, sha256) before -> after:\n  "
                   + "\n  ".join(f"{tp}: {b[0]} -> {a[0] if a else None}"
                                 for tp, (b, a) in sorted(lost.items())))
    for what in ("offsets", "topic_configs", "broker_configs", "quotas", "scram", "acls"):
        if getattr(after, what) != getattr(before, what):
            out.append(f"{what}: before {getattr(before, what)!r}\n"
                       f"        after  {getattr(after, what)!r}")
    return out
