"""Real Kafka 3.9.1 ZooKeeper-mode brokers in migration mode, and the KRaft controller that takes
over, for the canary oracle test and `benchmarks/rehearsal.py`.

The brokers run with `zookeeper.metadata.migration.enable=true`, `controller.quorum.voters`
naming one controller (3000) that is not running yet, and a CONTROLLER listener mapping
(what Kafka's `KafkaConfig` requires of a ZooKeeper broker with
`zookeeper.metadata.migration.enable`), i.e. Kafka's step "enter migration mode on the brokers".
`migration_controller` is that controller, in migration mode, on a given `metadata.log.dir`:
either a directory zk2kraft wrote (it takes over the log), or a freshly formatted one (Kafka's
own migration runs). `on_cutover_gate` lets `zk2kraft migrate --on-cutover` start it: the command
touches a file and waits; a thread here launches the controller and releases the command.

`PrintedSequence` is `zk2kraft plan --standin ... --json`'s `operator_sequence` as a rehearsal
runs it literally (issue 16): the controllers with exactly their printed properties, formatted
and zk2kraft started with the commands step 3 prints; the harness fills in only what the
operator supplies (directories, secrets, `<...>` placeholders).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
import logging
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient

from tests.support.kafka import (
    KafkaController,
    KafkaZkBroker,
    free_port,
    in_parallel,
    storage_format,
    wait_until_serving,
)
from tests.support.kraft import KafkaDist

__all__ = ["CONTROLLER_ID", "MigrationCluster", "PrintedSequence", "claim_on_cutover",
           "cut_over_by_signal", "dual_write_at", "log_ts", "migration_cluster",
           "migration_controller", "on_cutover_gate", "printed_sequence", "state_times",
           "wait_for_full_isr", "wait_for_kraft_claim", "wait_for_zk_controller",
           "BROKER_MIGRATION_CONFIGS"]

CONTROLLER_ID = 3000
# What leaving migration mode takes off a broker (Kafka's guide, "Reverting to ZooKeeper mode
# During the Migration"; the rollback runbook also drops the controller listener's map entry).
BROKER_MIGRATION_CONFIGS = ("zookeeper.metadata.migration.enable", "controller.quorum.voters",
                            "controller.listener.names")
# claim_on_cutover's script: /controller taken over as 3001, kraftControllerEpoch + 1
_CLAIM = (
    "import json,sys; from kazoo.client import KazooClient; c=KazooClient(sys.argv[1]); "
    "c.start(); d,s=c.get('/controller'); o=json.loads(d); "
    "o.update(brokerid=3001, kraftControllerEpoch=o['kraftControllerEpoch']+1); "
    "c.set('/controller', json.dumps(o).encode(), version=s.version); c.stop()"
)
_LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]")


@dataclass
class MigrationCluster:
    """The brokers, where the controller must listen, and the connect strings."""

    brokers: list[KafkaZkBroker]
    controller_port: int
    zk_connect: str

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap_servers for b in self.brokers)

    @property
    def voters(self) -> str:
        return f"{CONTROLLER_ID}@127.0.0.1:{self.controller_port}"



def _migration_props(voters: str, zk_connect: str) -> dict[str, str]:
    return {
        "zookeeper.metadata.migration.enable": "true",
        "controller.quorum.voters": voters,
        "controller.listener.names": "CONTROLLER",
        "inter.broker.protocol.version": "3.9",
        "zookeeper.connect": zk_connect,
    }


@contextlib.contextmanager
def migration_cluster(root: Path, zk_connect: str, *, brokers: int = 2,
                      heap: str = "384m", voters: str | None = None,
                      extra: dict[str, str] | None = None,
                      dist: KafkaDist | None = None) -> Iterator[MigrationCluster]:
    """ZooKeeper-mode brokers 0..n-1 in migration mode; all stopped on exit.

    `voters` is their `controller.quorum.voters` (default: controller 3000 alone, on a port
    chosen here); `extra` adds broker properties; `dist` runs another release than 3.9.1 (give
    its `inter.broker.protocol.version` in `extra`)."""
    port = free_port()
    nodes = []
    for i in range(brokers):
        props = _migration_props(voters or f"{CONTROLLER_ID}@127.0.0.1:{port}", zk_connect)
        props["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        props["default.replication.factor"] = str(min(2, brokers))
        # A controlled shutdown the controller refuses (STALE_CONTROLLER_EPOCH: the KRaft
        # controller that claimed /controller is gone; or "N partitions remaining to move" with
        # no replica to move them to) is tried 3 times, 5 s apart by default, then the broker
        # stops anyway. The rehearsals stop these brokers often and judge none of that wait:
        # the same end, sooner. (The offline rehearsals' brokers keep Kafka's default:
        # there a retry moves the last leaderships, which their stop order relies on.)
        props["controlled.shutdown.retry.backoff.ms"] = "1000"
        props.update(extra or {})
        nodes.append(KafkaZkBroker(root / f"broker{i}", zk_connect, broker_id=i, heap=heap,
                                   start_timeout=240, extra=props, dist=dist))
    try:
        for n in nodes:
            n.launch()
        for n in nodes:
            n.wait_started()
        wait_until_serving(nodes)
        yield MigrationCluster(nodes, port, zk_connect)
    finally:
        # all at once: a broker whose KRaft controller is gone waits out its stop timeout (its
        # controlled shutdown is never answered), and one after the other that wait added up
        in_parallel([n.stop for n in nodes])


def wait_for_full_isr(admin: Any, timeout_s: float = 240) -> None:
    """Every partition has a leader and its whole replica set in the ISR, as the brokers report
    it through `admin` (a confluent-kafka AdminClient), within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        short: dict[str, Any] = {}
        try:
            for name, topic in admin.list_topics(timeout=30).topics.items():
                for p in topic.partitions.values():
                    if p.leader < 0 or sorted(p.isrs) != sorted(p.replicas):
                        short[f"{name}-{p.id}"] = (p.leader, p.isrs)
        except Exception as exc:  # noqa: BLE001 - a restarting broker; asked again
            short["metadata"] = str(exc)
        if not short:
            return
        assert time.monotonic() < deadline, f"ISRs not full: {dict(list(short.items())[:5])}"
        time.sleep(1)


def migration_controller(root: Path, cluster: MigrationCluster, metadata_dir: Path, *,
                         heap: str = "384m") -> KafkaController:
    """The KRaft controller 3000 in migration mode on `metadata_dir` (not started)."""
    return KafkaController(
        root / "controller", metadata_dir, node_id=CONTROLLER_ID, heap=heap, start_timeout=240,
        quorum={CONTROLLER_ID: cluster.controller_port},
        extra={"zookeeper.metadata.migration.enable": "true",
               "zookeeper.connect": cluster.zk_connect,
               "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"})


@contextlib.contextmanager
def on_cutover_gate(root: Path, controller: KafkaController) -> Iterator[str]:
    """Yield an `--on-cutover` command that has this process launch `controller`.

    The command touches `go` and waits for `launched`; a thread launches the controller's JVM
    when `go` appears (our `--on-cutover` returns as soon as the JVM is started, like an
    operator's `systemctl start`). The controller is stopped on exit.
    """
    go, launched = root / "cutover.go", root / "cutover.launched"
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            if go.exists():
                controller.launch()
                launched.touch()
                return
            time.sleep(0.01)  # polling a file the child process creates

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        yield (f"touch {go} && while [ ! -e {launched} ]; do sleep 0.02; done")
    finally:
        stop.set()
        t.join(5)
        controller.stop()


def log_ts(line: str) -> float | None:
    m = _LOG_TIME.match(line)
    if m is None:
        return None
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def state_times(controller: KafkaController) -> dict[str, float]:
    """Wall time (epoch seconds, from its log) of each migration state the controller entered
    first ("transitioning from X to Y state"), plus "claim" for "Claimed ZK controller
    leadership"."""
    out: dict[str, float] = {}
    for line in controller.log_text().splitlines():
        m = re.search(r"transitioning from \w+ to (\w+) state", line)
        ts = log_ts(line)
        if ts is None:
            continue
        if m and m.group(1) not in out:
            out[m.group(1)] = ts
        if "Claimed ZK controller leadership" in line and "claim" not in out:
            out["claim"] = ts
    return out


def dual_write_at(controller: KafkaController, timeout: float = 240.0) -> float:
    """Wait until the controller logs DUAL_WRITE; its log time (epoch seconds)."""
    controller.wait_for_log(r"transitioning from \w+ to DUAL_WRITE state", timeout)
    return state_times(controller)["DUAL_WRITE"]


def claim_on_cutover(zk_connect: str) -> str:
    """An `--on-cutover` command for tests without Kafka: it does what the KRaft controller does
    on taking over, claiming /controller as 3001 with the next kraftControllerEpoch (a versioned
    set, so it fails if anyone else moved the claim)."""
    return f"{sys.executable} -c \"{_CLAIM}\" {zk_connect}"


def wait_for_kraft_claim(zk: KazooClient, timeout_s: float) -> dict[str, Any]:
    """Read /controller until a KRaft controller has claimed it with a kraftControllerEpoch above
    zk2kraft's own (1), or until `timeout_s` passed. Returns the last claim read: the caller
    asserts on it, with the controllers' logs at hand when no claim came."""
    deadline = time.monotonic() + timeout_s
    while True:
        claim: dict[str, Any] = json.loads(zk.get("/controller")[0])
        if claim.get("kraftControllerEpoch", -1) > 1 or time.monotonic() >= deadline:
            return claim
        time.sleep(0.5)


def wait_for_zk_controller(zk: KazooClient, timeout_s: float = 120.0) -> dict[str, Any]:
    """ZooKeeper's own controller holds /controller again (after a rollback or hand-back):
    an ephemeral claim without a KRaft epoch. Returns it; fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        got = zk.exists("/controller")
        claim: dict[str, Any] = json.loads(zk.get("/controller")[0]) if got else {}
        if got and got.ephemeralOwner and claim.get("kraftControllerEpoch", -1) == -1:
            return claim
        assert time.monotonic() < deadline, f"no ZooKeeper controller: {claim}"
        time.sleep(0.5)


def kraft_controller_took_over(zk: KazooClient, nodes: list[KafkaController]
                                ) -> KafkaController:
    """After a handover from the stand-in: the controller that claimed `/controller` above our
    epoch reached DUAL_WRITE on the log we handed over, without WAIT_FOR_BROKERS or ZK_MIGRATION
    (Kafka did not copy ZooKeeper again). Returns that controller."""
    claim = wait_for_kraft_claim(zk, 240)
    logs = "\n".join(n.log_text() for n in nodes)
    assert claim.get("kraftControllerEpoch", -1) > 1, logs[-6000:]
    leader = next(n for n in nodes if n.node_id == claim["brokerid"])
    leader.wait_for_log(r"transitioning from \w+ to DUAL_WRITE state", 240)
    states = state_times(leader)
    assert "WAIT_FOR_BROKERS" not in states and "ZK_MIGRATION" not in states, states
    assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
    return leader


@dataclass(frozen=True)
class BrokerRpcs:
    """What a KRaft controller that took over did towards the ZooKeeper-mode brokers, from its
    own log (Kafka 3.9's `MigrationPropagator` and `ControllerChannelManager` lines).

    Attributes:
        update_metadata: "Sending UpdateMetadata request to brokers HashSet(...)" lines with at
            least one broker, from KRAFT_CONTROLLER_TO_BROKER_COMM to DUAL_WRITE.
        leader_and_isr: "Sending LeaderAndIsr request to broker N" lines, same span.
        offline: "Not sending request ... since it is offline" lines, whole log.
        registered: brokers that registered with it (a new incarnation, or none before), in
            log order: "Registering a new incarnation of broker N" / "No previous registration
            found for broker N".
    """

    update_metadata: int
    leader_and_isr: int
    offline: int
    registered: tuple[int, ...]


def broker_rpcs(log: str) -> BrokerRpcs:
    """Count `BrokerRpcs` in a controller's log."""
    start = log.find("to KRAFT_CONTROLLER_TO_BROKER_COMM")
    end = log.find("from KRAFT_CONTROLLER_TO_BROKER_COMM to DUAL_WRITE")
    span = log[start:end] if 0 <= start < end else ""
    umr = len(re.findall(r"Sending UpdateMetadata request to brokers \w*\(\d", span))
    lisr = len(re.findall(r"Sending LeaderAndIsr request to broker \d", span))
    registered = tuple(int(m) for m in re.findall(
        r"(?:Registering a new incarnation of broker|No previous registration found for "
        r"broker) (\d+)", log))
    return BrokerRpcs(umr, lisr, log.count("since it is offline"), registered)


def wait_for_migration_epoch(zk: KazooClient, epoch: int, timeout_s: float) -> dict[str, Any]:
    """Read /migration until it names kraft_controller_epoch `epoch`, or until `timeout_s` passed.

    A KRaft controller claims /controller first and writes /migration only when it records its
    next offset (after syncing its image to ZooKeeper), so right after the claim /migration may
    still carry the previous epoch. Returns the last state read: the caller asserts on it."""
    deadline = time.monotonic() + timeout_s
    while True:
        state: dict[str, Any] = json.loads(zk.get("/migration")[0])
        if state.get("kraft_controller_epoch") == epoch or time.monotonic() >= deadline:
            return state
        time.sleep(0.5)


def fence_znodes(client: KazooClient) -> dict[str, tuple[bytes, int, int] | None]:
    """/controller_epoch, /controller and /migration: data, version, ephemeral owner (None
    when absent), to show that a refused fence left them exactly as they were."""
    out: dict[str, tuple[bytes, int, int] | None] = {}
    for path in ("/controller_epoch", "/controller", "/migration"):
        got = client.exists(path)
        out[path] = None if got is None else (client.get(path)[0], got.version,
                                              got.ephemeralOwner)
    return out


class ClientLog(logging.Handler):
    """The last lines a librdkafka client logged (its `debug` contexts included), kept to say
    why a consumer read nothing when a rehearsal fails; passed as the client's `logger`."""

    def __init__(self, name: str, lines: int = 400) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)
        self.logger = logging.getLogger(f"rdkafka.{name}.{uuid.uuid4().hex[:8]}")
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.created:.3f} {record.getMessage()}")

    def tail(self, n: int = 120) -> str:
        return "\n".join(list(self.lines)[-n:])


def produce_and_consume(bootstrap: str, topic: str) -> None:
    """One idempotent acks=all record into `topic`, read back from the beginning of the
    partition it landed in. Assigned, not subscribed: no group coordinator is needed (its
    partition of an RF 1 `__consumer_offsets` may sit on a broker a rehearsal stopped). The
    partition comes from the delivery report, not from Metadata: a topic just created may be
    unknown to the bootstrap broker for a while (it learns by UpdateMetadata), and a consumer
    assigned the empty partition list Metadata gave then read nothing for 120 s (one run, a topic
    created after the cutover)."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all",
                         "enable.idempotence": True, "message.timeout.ms": 120000})
    marker = uuid.uuid4().bytes
    errors: list[Any] = []
    landed: list[int] = []
    producer.produce(topic, marker, on_delivery=lambda e, m: errors.append(e) if e
                     else landed.append(m.partition()))
    assert producer.flush(150) == 0 and not errors and landed, errors
    log = ClientLog("check")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4()}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False,
                         "debug": "consumer,fetch,topic,metadata"}, logger=log.logger)
    consumer.assign([TopicPartition(topic, landed[0], OFFSET_BEGINNING)])
    got: list[bytes] = []
    deadline = time.monotonic() + 120
    try:
        while marker not in got and time.monotonic() < deadline:
            msg = consumer.poll(1.0)
            if msg is not None and msg.error() is None:
                got.append(msg.value())
    finally:
        consumer.close()
    assert marker in got, (f"the record produced to {topic} was not consumed: {got}; the "
                           f"consumer's last log lines:\n{log.tail()}")


def wait_for_znode(zk: KazooClient, path: str, timeout_s: float) -> bytes:
    """`path`'s data once it exists (e.g. a topic the KRaft controller dual-writes)."""
    deadline = time.monotonic() + timeout_s
    while zk.exists(path) is None:
        assert time.monotonic() < deadline, f"{path} never appeared in ZooKeeper"
        time.sleep(0.2)
    data: bytes = zk.get(path)[0]
    return data


_REPO = Path(__file__).resolve().parents[2]
_STEP3 = "Provision the controllers and start zk2kraft's stand-in"


@dataclass(frozen=True)
class PrintedSequence:
    """`operator_sequence` of `plan --standin` (its JSON as printed) and how to run step 3."""

    doc: dict[str, Any]

    def step(self, title: str) -> list[str]:
        """The printed actions of the step titled `title`."""
        (actions,) = [s["actions"] for s in self.doc["steps"] if s["title"] == title]
        return list(actions)

    def controller_ids(self) -> list[int]:
        return [c["node_id"] for c in self.doc["controllers"]]

    def assert_brokers_run_printed(self, brokers: Sequence[Any]) -> None:
        """Every broker of the cluster is one the sequence prints, running each property it
        prints for that broker with the printed value."""
        printed = {b["broker_id"]: b["properties"] for b in self.doc["brokers"]}
        assert sorted(printed) == [b.broker_id for b in brokers], printed
        for broker in brokers:
            mine = printed[broker.broker_id]
            assert {k: broker.properties.get(k) for k in mine} == mine, broker.broker_id

    def controller(self, node_id: int, workdir: Path, metadata_dir: Path,
                   fill: Mapping[str, str] | None = None, heap: str = "320m", *,
                   formatted: bool = True) -> KafkaController:
        """Controller `node_id` configured with exactly its printed properties (not started),
        `<...>` placeholders filled: its metadata directory, and `fill` (property -> value)
        for the others an operator supplies (a secret, a listener name). Formatted as step 3
        prints (`kafka-storage format --cluster-id=ID --release-version MV`), unless
        `formatted` is False (the caller formats it, e.g. `format_all`)."""
        (printed,) = [c["properties"] for c in self.doc["controllers"]
                      if c["node_id"] == node_id]
        props = dict(printed)
        for key in ("metadata.log.dir", "log.dirs"):
            assert props[key] == f"<controller {node_id}'s metadata directory>", props
            props[key] = str(metadata_dir)
        for key, value in (fill or {}).items():
            assert props[key].startswith("<"), (key, props[key])  # only placeholders
            props[key] = value
        assert not any("<" in v for v in props.values()), props
        quorum = {int(v.split("@")[0]): int(v.rsplit(":", 1)[1])
                  for v in props["controller.quorum.voters"].split(",")}
        node = KafkaController(workdir, metadata_dir, node_id=node_id, heap=heap,
                               start_timeout=240, quorum=quorum, extra=props)
        assert all(node.properties[k] == v for k, v in props.items())
        if formatted:
            self.format(node)
        return node

    def controllers(self, root: Path, fill: Mapping[str, str] | None = None,
                    heap: str = "320m") -> list[KafkaController]:
        """Every printed controller as `controller` makes it, in `root/node<id>` with its
        metadata directory `root/meta<id>`, all formatted at once (`format_all`)."""
        nodes = [self.controller(n, root / f"node{n}", root / f"meta{n}", fill, heap,
                                 formatted=False) for n in self.controller_ids()]
        self.format_all(nodes)
        return nodes

    def format_all(self, nodes: Sequence[KafkaController]) -> None:
        """`format` on each of `nodes` at once: independent `kafka-storage format` runs, one
        JVM each, rather than one after the other."""
        in_parallel([functools.partial(self.format, node) for node in nodes])

    def format(self, node: KafkaController) -> None:
        """Step 3's `kafka-storage.sh format --cluster-id=ID --release-version MV --config
        controller.properties`, on `node`'s configuration."""
        (fmt,) = [a for a in self.step(_STEP3) if a.startswith("format each controller")]
        m = re.search(r"kafka-storage\.sh format --cluster-id=(\S+) --release-version (\S+) "
                      r"--config controller\.properties", fmt)
        assert m is not None, fmt
        storage_format(node.config_path, m.group(1), release_version=m.group(2))

    def start_order(self) -> list[str]:
        """What step 3 starts, in its printed order: "zk2kraft" and "controllers"."""
        order = []
        for action in self.step(_STEP3):
            if action.startswith("start zk2kraft: "):
                order.append("zk2kraft")
            elif re.match(r"(then, within those \d+ s, )?start controllers ", action):
                order.append("controllers")
        assert sorted(order) == ["controllers", "zk2kraft"], self.step(_STEP3)
        return order

    def migrate_argv(self, *added: str, no_brokers: bool = False) -> list[str]:
        """Step 3's `zk2kraft migrate ...` command as printed (run it in the directory its
        relative `--json report.json` is meant for), `added` flags after it.

        `no_brokers`: the sample's brokers exist only in ZooKeeper, so the printed
        `--bootstrap-server` (their registered listeners) names hosts that do not exist; it
        is the one printed flag left out (no canary)."""
        (start,) = [a for a in self.step(_STEP3) if a.startswith("start zk2kraft: ")]
        m = re.match(r"start zk2kraft: zk2kraft (migrate .*?) \(it listens", start)
        assert m is not None, start
        argv = shlex.split(m.group(1))
        if no_brokers:
            at = argv.index("--bootstrap-server")
            del argv[at:at + 2]
        return [sys.executable, "-m", "migrate.cli", *argv, *added]

    def start_migrate(self, cwd: Path, *added: str, no_brokers: bool = False
                      ) -> subprocess.Popen[str]:
        """zk2kraft started as step 3 prints, in `cwd` (where report.json lands)."""
        return subprocess.Popen(self.migrate_argv(*added, no_brokers=no_brokers), cwd=cwd,
                                env=_cli_env(), text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    def run_step3(self, cwd: Path, nodes: list[KafkaController], *added: str
                  ) -> subprocess.Popen[str]:
        """Step 3 in its printed order: zk2kraft started (`start_migrate`), then, once its
        stand-in listens (after the pre-flight read and judged the tree), the controllers;
        returns zk2kraft's process once they have started."""
        assert self.start_order() == ["zk2kraft", "controllers"]
        proc = self.start_migrate(cwd, *added)
        port = int(self.doc["standin"]["listen"].rsplit(":", 1)[1])
        deadline = time.monotonic() + 240
        while not _listening(port):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the stand-in did not listen"
            time.sleep(0.2)
        for node in nodes:
            node.launch()
        for node in nodes:
            node.wait_started()
        return proc

    def run_again(self, cwd: Path, *added: str) -> subprocess.CompletedProcess[str]:
        """Step 3's `zk2kraft migrate` command run again (a refusal's advice), to its end."""
        return subprocess.run(self.migrate_argv(*added), cwd=cwd, env=_cli_env(), text=True,
                              capture_output=True, timeout=600)


def _cli_env() -> dict[str, str]:
    path = os.environ.get("PYTHONPATH")
    return {**os.environ, "COLUMNS": "400",
            "PYTHONPATH": str(_REPO) + (os.pathsep + path if path else "")}


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def cut_over_by_signal(proc: subprocess.Popen[str], journal: Path) -> tuple[str, str]:
    """Step 4 of `--cutover manual`: once zk2kraft mirrors (its journal's phase), `kill -USR1
    its pid` (again while it still mirrors: `signal_until_cutover`); its stdout and stderr
    once it ended."""
    deadline = time.monotonic() + 600
    while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "zk2kraft did not reach the mirror"
        time.sleep(0.2)
    return signal_until_cutover(proc, journal)


def signal_until_cutover(proc: subprocess.Popen[str], journal: Path, *, every_s: float = 5.0,
                         timeout_s: float = 600.0) -> tuple[str, str]:
    """`kill -USR1` zk2kraft's pid, and again every `every_s` while its journal still says
    `mirror`, as an operator gives the signal again after a refusal (a broker not yet
    registered with the stand-in and fetching refuses it, issue 30); its stdout and stderr
    once it ended."""
    deadline = time.monotonic() + timeout_s
    while True:
        proc.send_signal(signal.SIGUSR1)
        try:
            return proc.communicate(timeout=every_s)
        except subprocess.TimeoutExpired:
            pass
        if json.loads(journal.read_text())["phase"] != "mirror":
            return proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        assert time.monotonic() < deadline, "the cutover was never accepted"


def printed_sequence(connect: str, ports: Mapping[int, int], standin_dir: Path,
                     standin: int = 3000, *extra: str) -> PrintedSequence:
    """`zk2kraft plan --zookeeper CONNECT --standin STANDIN@127.0.0.1:P=DIR --controller
    N@127.0.0.1:P ... --json - EXTRA`'s `operator_sequence` (`ports`: every voter's port;
    `extra`: more plan flags, e.g. `--target-kafka 4.4`)."""
    argv = [sys.executable, "-m", "migrate.cli", "plan", "--zookeeper", connect, "--json", "-",
            "--standin", f"{standin}@127.0.0.1:{ports[standin]}={standin_dir}",
            *[f"--controller={n}@127.0.0.1:{p}" for n, p in sorted(ports.items())
              if n != standin], *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    doc = json.loads(done.stdout)["operator_sequence"]
    assert doc["path"] == "online-standin", doc
    return PrintedSequence(doc)
