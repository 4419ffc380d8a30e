"""Real Kafka 3.9.1 for the oracle tests, run from Maven Central jars with `java -cp`.

The jars come from `tests/kafka/fetch.sh` (into the git-ignored `tests/kafka/jars/`). Nothing here
mocks Kafka: every helper runs Kafka's own classes (from their Maven Central jars):

* `dump_log` / `dump_log_payloads` / `dump_log_batches` — `kafka.tools.DumpLogSegments
  --cluster-metadata-decoder`, the JSON each record decodes to by Kafka's generated converter;
* `metadata_shell` — `org.apache.kafka.shell.MetadataShell --snapshot FILE CMD...` (on a copy of
  the file, since the shell takes the `.lock` of a directory two levels up);
* `storage_format` — `kafka.tools.StorageTool format`;
* `KafkaController` — a KRaft controller (optionally combined with a broker) on loopback ports,
  waited for until it logs "Kafka Server started" and its port answers; its log is kept when it
  fails to start so the test failure can show why.

A missing jar cache is a test FAILURE naming the fix (`run tests/kafka/fetch.sh`), never a skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from tests.support import cds
from tests.support.ports import free_port

if TYPE_CHECKING:
    from tests.support.kraft import KafkaDist

__all__ = [
    "KAFKA_DIR",
    "DumpedBatch",
    "KafkaController",
    "KafkaJarsMissing",
    "KafkaZkBroker",
    "admin_tool",
    "archive_flags",
    "classpath",
    "dump_log",
    "dump_log_batches",
    "dump_log_payloads",
    "fill_and_stop",
    "in_parallel",
    "metadata_shell",
    "nodes_failure",
    "random_cluster_id",
    "run_kafka_class",
    "server_jvm_flags",
    "storage_format",
    "wait_unregistered",
    "wait_until_serving",
]

KAFKA_DIR = Path(__file__).resolve().parents[1] / "kafka"
_JARS = KAFKA_DIR / "jars"
_TOOLS_LOG4J = KAFKA_DIR / "tools-log4j.properties"
_SERVER_LOG4J = KAFKA_DIR / "log4j.properties"
SERVER_LOG4J = _SERVER_LOG4J
_TOOL_HEAP = "256m"


class KafkaJarsMissing(RuntimeError):
    """The Kafka jar cache is absent; the message says how to fill it."""


def classpath() -> str:
    """The `java -cp` value for the cached Kafka 3.9.1 jars.

    Raises:
        KafkaJarsMissing: the cache is missing or incomplete (tests must fail, not skip).
    """
    if not (_JARS / ".complete").is_file() or not any(_JARS.glob("kafka_2.13-*.jar")):
        raise KafkaJarsMissing(
            f"Kafka 3.9.1 jars not found in {_JARS}: run tests/kafka/fetch.sh "
            "(needs mvn and access to Maven Central)"
        )
    return str(_JARS / "*")


# Flags every Kafka server this harness starts gets before its own `jvm_flags`, read from the
# environment at each launch. tests/conftest.py sets C1 only (`-XX:TieredStopAtLevel=1`): a test
# judges behaviour, not speed, and on the 2-core CI host the suite is bound by CPU. Measured
# 2026-11-27 (busy host): a ZooKeeper-mode broker serving the canary for 60 s spent 17-20 CPU s
# on C1 against 27-37 with the JVM's defaults, and 2.8-3.4 against 3.9-5.2 CPU s to start.
# Benchmarks do not load conftest, so their servers keep the defaults, as operators run Kafka.
SERVER_JVM_FLAGS_ENV = "ZK2KRAFT_TEST_SERVER_JVM_FLAGS"


def server_jvm_flags() -> list[str]:
    """`$ZK2KRAFT_TEST_SERVER_JVM_FLAGS`, split on whitespace (empty when unset)."""
    return os.environ.get(SERVER_JVM_FLAGS_ENV, "").split()


def archive_flags(jars: Path = _JARS) -> list[str]:
    """The class-data sharing flags of the suite's JVMs on `jars` (tests/support/cds.py): the
    3.9.1 jars' archive; none for another release's jars, and none outside the suite."""
    if jars != _JARS:
        return []
    return cds.archive_flags(_java(), _JARS, classpath(), _SERVER_LOG4J, server_jvm_flags())


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise KafkaJarsMissing("no `java` on PATH: install a JDK 17 (default-jdk-headless)")
    return java


def run_kafka_class(
    main_class: str, *args: str, timeout: float = 180.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run one of Kafka's command-line classes and capture its output.

    Args:
        main_class: e.g. `kafka.tools.DumpLogSegments`.
        *args: its arguments.
        timeout: seconds before the tool is killed (then `subprocess.TimeoutExpired`).
        check: raise `AssertionError` with stdout/stderr when the tool exits non-zero.
    """
    cmd = [
        _java(),
        f"-Xmx{_TOOL_HEAP}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        *archive_flags(),
        f"-Dlog4j.configuration=file:{_TOOLS_LOG4J}",
        "-cp",
        classpath(),
        main_class,
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{main_class} {' '.join(args)} exited {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    return proc


def dump_log(path: Path | str) -> str:
    """`kafka-dump-log --cluster-metadata-decoder --files PATH` output (stdout) as text."""
    return run_kafka_class(
        "kafka.tools.DumpLogSegments", "--cluster-metadata-decoder", "--files", str(path)
    ).stdout


_RECORD_LINE = re.compile(r"^\| offset: (?P<offset>-?\d+) .*?(?P<rest>(payload: |controlType: |"
                          r"SnapshotHeader |SnapshotFooter |KRaftVersion |KRaftVoters ).*)$")
_BATCH_LINE = re.compile(
    r"^baseOffset: (?P<base>\d+) lastOffset: (?P<last>\d+) count: (?P<count>\d+) .*?"
    r"partitionLeaderEpoch: (?P<epoch>-?\d+) .*?isControl: (?P<control>true|false) .*?"
    r"position: (?P<position>\d+) CreateTime: (?P<ts>-?\d+) size: (?P<size>\d+) .*?"
    r"crc: (?P<crc>\d+) isvalid: (?P<valid>true|false)"
)


def dump_log_payloads(path: Path | str, *, text: str | None = None) -> list[dict[str, Any]]:
    """Every data record of a log/checkpoint as Kafka decodes it, in offset order.

    Each element is `{"offset": o, "type": ..., "version": ..., "data": {...}}` — the payload JSON
    DumpLogSegments prints, plus the offset, i.e. the shape of `zk2kraft inspect --json`.

    Args:
        path: the `.log` or `.checkpoint` file.
        text: an already captured `dump_log` output (to avoid running the JVM twice).
    """
    out = dump_log(path) if text is None else text
    result: list[dict[str, Any]] = []
    for line in out.splitlines():
        m = _RECORD_LINE.match(line)
        if m and m.group("rest").startswith("payload: "):
            payload = json.loads(m.group("rest")[len("payload: "):])
            result.append({"offset": int(m.group("offset")), **payload})
    return result


@dataclass
class DumpedBatch:
    """One batch as DumpLogSegments describes it, with its records' one-line descriptions."""

    base_offset: int
    last_offset: int
    count: int
    leader_epoch: int
    is_control: bool
    position: int
    timestamp_ms: int
    size: int
    crc: int
    valid: bool
    records: list[str] = field(default_factory=list)


def dump_log_batches(path: Path | str, *, text: str | None = None) -> list[DumpedBatch]:
    """The batch headers DumpLogSegments prints, each with its record lines (control or data)."""
    out = dump_log(path) if text is None else text
    batches: list[DumpedBatch] = []
    for line in out.splitlines():
        b = _BATCH_LINE.match(line)
        if b:
            batches.append(
                DumpedBatch(
                    base_offset=int(b.group("base")),
                    last_offset=int(b.group("last")),
                    count=int(b.group("count")),
                    leader_epoch=int(b.group("epoch")),
                    is_control=b.group("control") == "true",
                    position=int(b.group("position")),
                    timestamp_ms=int(b.group("ts")),
                    size=int(b.group("size")),
                    crc=int(b.group("crc")),
                    valid=b.group("valid") == "true",
                )
            )
            continue
        m = _RECORD_LINE.match(line)
        if m and batches:
            batches[-1].records.append(m.group("rest"))
    return batches


def metadata_shell(path: Path | str, *command: str, attempts: int = 5) -> str:
    """Run MetadataShell non-interactively on a copy of a `.log`/`.checkpoint` file.

    The shell locks `D/.lock` two directories above the file when it exists (a running server
    holds it), so the file is copied into a private temporary directory first.

    MetadataShell 3.9.1 sometimes runs its command before its loader has published the image it
    read (its reader reports "caught up" at end of file while the loader is still publishing):
    about 1 run in 15 here prints "no such file or directory", or nothing, for a node that is
    there, and once it hung. Such a run is repeated, up to `attempts` times; a node really
    missing still fails.

    Args:
        path: the log segment or snapshot file.
        *command: the shell command and its arguments, e.g. `"ls", "/image/topics/byName"`.
        attempts: runs allowed when the output says a node does not exist.
    """
    src = Path(path)
    out = ""
    with tempfile.TemporaryDirectory(prefix="zk2kraft-shell-") as tmp:
        copy = Path(tmp) / "a" / "b" / src.name
        copy.parent.mkdir(parents=True)
        shutil.copyfile(src, copy)
        for _ in range(max(1, attempts)):
            try:
                out = run_kafka_class(
                    "org.apache.kafka.shell.MetadataShell", "--snapshot", str(copy), *command,
                    timeout=_SHELL_TIMEOUT_S,
                ).stdout
            except subprocess.TimeoutExpired:
                # seen once (CI run on f565f58): the shell still running after 180 s on a
                # 3-topic log it answers in 0.3 s here; run it again
                out = ""
                continue
            if out.strip() and "no such file or directory" not in out.lower():
                break
    return out


# MetadataShell answers on a test log in 0.3 s here; seconds on a host at load average 30
_SHELL_TIMEOUT_S = 90.0


def random_cluster_id() -> str:
    """A fresh cluster id from Kafka itself (`kafka-storage random-uuid`)."""
    return run_kafka_class("kafka.tools.StorageTool", "random-uuid").stdout.strip()


def storage_format(
    config: Path | str, cluster_id: str, *, release_version: str | None = None,
    extra: Sequence[str] = (),
) -> str:
    """`kafka-storage format --cluster-id=CLUSTER_ID -c CONFIG [-r VERSION]`; returns its output.

    The `=` form matters: one random cluster id in 64 starts with `-`, and Kafka's argument
    parser reads `-t -aN2G…` as a missing value followed by an unknown flag (a CI run failed so).
    """
    args = ["format", f"--cluster-id={cluster_id}", "-c", str(config)]
    if release_version is not None:
        args += ["-r", release_version]
    return run_kafka_class("kafka.tools.StorageTool", *args, *extra).stdout


def in_parallel(calls: Sequence[Callable[[], object]]) -> None:
    """Run `calls` at once, each in its own thread, and wait for all; the first exception
    raised is raised again once every call ended. For independent JVM runs (a quorum's
    `storage_format`s): a JVM's start is mostly single-threaded, so on 2 cores two of them
    take little longer than one."""
    if len(calls) <= 1:
        for call in calls:
            call()
        return
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
    for future in futures:
        future.result()


def _port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class _KafkaProcess:
    """One `kafka.Kafka` JVM: its config file, its log, start/wait/stop and context manager.

    Subclasses set `properties` (written by `_write_config`), say how their start-up shows in
    `_ready()` and name themselves in `_label` for failure messages.
    """

    _label: str
    properties: dict[str, str]

    def __init__(self, workdir: Path, *, heap: str, start_timeout: float) -> None:
        self.workdir = Path(workdir)
        self.log4j = _SERVER_LOG4J  # a benchmark may point one node at a quieter config
        self.jvm_flags: list[str] = []  # a benchmark may add some (e.g. the JIT's tiers)
        self.dist: KafkaDist | None = None  # another release than 3.9.1 (`launch`)
        self.heap = heap
        self.start_timeout = start_timeout
        self.logs_dir = self.workdir / "logs"
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.workdir / "server.properties"
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_at_launch = 0  # where server.log stood at the last launch (`_spawn`)

    def _write_config(self) -> None:
        self.config_path.write_text(
            "".join(f"{k}={v}\n" for k, v in self.properties.items()), encoding="utf-8"
        )

    def _ready(self) -> bool:
        raise NotImplementedError

    @property
    def pid(self) -> int | None:
        """The JVM's pid while launched (what `/proc/locks` names as the `.lock` holder)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def server_log(self) -> Path:
        """The node's log4j file."""
        return self.logs_dir / "server.log"

    def launched_log_text(self) -> str:
        """What the server log holds from the last launch on (all of it after the first)."""
        return self.log_text()[self._log_at_launch:]

    def log_text(self) -> str:
        """The server log so far ('' before the first line)."""
        try:
            return self.server_log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def all_logs_text(self) -> str:
        """Every server log this node wrote, oldest first: the ones `restart()` set aside
        (server.log.1, .2, ...) and the current one (a check for a fault must see them all)."""
        aside = sorted(self.logs_dir.glob("server.log.*"), key=lambda p: int(p.suffix[1:]))
        return "".join(p.read_text(encoding="utf-8", errors="replace") for p in aside) \
            + self.log_text()

    def assert_running(self) -> None:
        """Fail with the node's log if its JVM has exited since it was launched."""
        if self._proc is not None and self._proc.poll() is not None:
            raise self._failure(f"exited with code {self._proc.returncode}")

    def _failure(self, why: str) -> AssertionError:
        stdout = self.logs_dir / "stdout"
        out = stdout.read_text(errors="replace")[-3000:] if stdout.exists() else ""
        release = getattr(getattr(self, "dist", None), "version", "3.9.1")
        return AssertionError(
            f"Kafka {release} {self._label} {why} (work dir {self.workdir} kept)\n"
            f"--- server.log tail ---\n{self.log_text()[-6000:]}\n--- stdout/stderr ---\n{out}"
        )

    def start(self) -> None:
        """Start the node and wait until it serves.

        Raises:
            AssertionError: it exited or did not come up within `start_timeout` (with its log).
        """
        self.launch()
        self.wait_started()

    def jvm_command(self) -> list[str]:
        """`java` and the flags every server of the harness starts with: heap, serial GC, then
        `server_jvm_flags()` and this node's own `jvm_flags` (later flags win)."""
        return [_java(), f"-Xmx{self.heap}", "-Xms64m", "-XX:+UseSerialGC",
                *server_jvm_flags(), *self.jvm_flags]

    def launch(self) -> None:
        """Start the JVM without waiting (start every voter of a quorum, then wait for each):
        3.9.1's, or the release `dist` names (set it before a `restart` to roll the node onto
        another release, as Kafka's rolling upgrade does)."""
        if self.dist is not None:
            self._spawn([*self.jvm_command(), *self.dist.server_logging,
                         f"-Dkafka.logs.dir={self.logs_dir}", "-cp", self.dist.classpath(),
                         "kafka.Kafka", str(self.config_path)])
            return
        cmd = [
            *self.jvm_command(),
            *archive_flags(),
            f"-Dlog4j.configuration=file:{self.log4j}",
            f"-Dkafka.logs.dir={self.logs_dir}",
            "-cp",
            classpath(),
            "kafka.Kafka",
            str(self.config_path),
        ]
        self._spawn(cmd)

    def _spawn(self, cmd: list[str]) -> None:
        """Start `cmd` as this node's JVM, its output appended to `logs/stdout`, noting where
        server.log stood: a node launched again on its work dir appends to its old log, whose
        lines must not count as the new JVM's."""
        self._log_at_launch = len(self.log_text())
        with open(self.logs_dir / "stdout", "ab") as out:
            self._proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def wait_started(self) -> None:
        """Wait until the launched node logs that it started and its ports answer.

        Raises:
            AssertionError: it exited or did not come up within `start_timeout` (with its log).
        """
        assert self._proc is not None, "launch() first"
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._proc.poll() is not None:
                raise self._failure(f"exited with code {self._proc.returncode} during start-up")
            if self._ready():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise self._failure(f"did not start within {self.start_timeout:.0f}s")
            time.sleep(0.2)  # polling a child process's log; there is no event to wait on

    def wait_for_log(self, pattern: str, timeout: float = 60.0) -> re.Match[str]:
        """Wait until the log written since the last launch matches `pattern` (regex); fail
        with the log otherwise."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.launched_log_text())
            if m:
                return m
            if self._proc is not None and self._proc.poll() is not None:
                raise self._failure(f"exited ({self._proc.returncode}) before logging {pattern!r}")
            if time.monotonic() > deadline:
                raise self._failure(f"did not log {pattern!r} within {timeout:.0f}s")
            time.sleep(0.2)  # polling a child process's log

    def stop(self, timeout: float = 30.0) -> int | None:
        """Stop the node (SIGTERM, SIGKILL after `timeout`); returns its exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        return proc.returncode

    def restart(self, *, remove: Sequence[str] = (), update: Mapping[str, str] | None = None,
                ready_to_start: Callable[[], bool] | None = None) -> None:
        """Stop the node, rewrite its config (properties removed, then updated), and start it
        again, waiting until it serves. The old log is kept beside the new one (server.log.N),
        so that `log_text()`, and what reads it (the migration states' times, checks on the
        log), holds only what the new process writes (`all_logs_text()` holds both).
        `ready_to_start` is polled (up to 120 s) before the start: a ZooKeeper-mode broker
        killed after its stop timeout leaves its ephemeral `/brokers/ids/N` until its session
        expires, and a broker that finds it refuses to start (NodeExists)."""
        self.stop()
        deadline = time.monotonic() + 120
        while ready_to_start is not None and not ready_to_start():
            if time.monotonic() > deadline:
                raise self._failure("was not ready to start again within 120 s")
            time.sleep(0.5)
        for key in remove:
            self.properties.pop(key, None)
        self.properties.update(update or {})
        self._write_config()
        if self.server_log.exists():
            n = len(list(self.logs_dir.glob("server.log.*"))) + 1
            self.server_log.rename(self.logs_dir / f"server.log.{n}")
        self.start()

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class KafkaController(_KafkaProcess):
    """A real Kafka 3.9.1 KRaft node (controller, or broker+controller) as a context manager.

    `__init__` writes `WORKDIR/server.properties` (so it can be formatted with `storage_format`
    first); entering starts `kafka.Kafka` and returns once the server logs that it started and
    its controller port accepts connections; leaving stops it (SIGTERM, then SIGKILL). Its log
    is `WORKDIR/logs/server.log`; when start-up fails the error includes the log's tail.

    Args:
        workdir: private directory for config and logs (kept afterwards for post-mortems).
        metadata_log_dir: the voter directory (`metadata.log.dir`).
        node_id: this node's id; the single voter of the quorum unless `quorum` is given.
        broker: also run a broker (`process.roles=broker,controller`) with a PLAINTEXT listener.
        extra: more server properties (override the generated ones).
        heap: JVM -Xmx.
        start_timeout: seconds to wait for start-up.
        quorum: node id -> controller port of every voter (a multi-voter static quorum; ports
            from `free_port()`), this node's included.
    """

    def __init__(
        self,
        workdir: Path,
        metadata_log_dir: Path,
        *,
        node_id: int = 1,
        broker: bool = False,
        extra: Mapping[str, str] | None = None,
        heap: str = "512m",
        start_timeout: float = 120.0,
        quorum: Mapping[int, int] | None = None,
    ) -> None:
        super().__init__(workdir, heap=heap, start_timeout=start_timeout)
        self.metadata_log_dir = Path(metadata_log_dir)
        self.node_id = node_id
        self._label = f"node {node_id}"
        self.broker = broker
        self.quorum = dict(quorum) if quorum else None
        self.controller_port = self.quorum[node_id] if self.quorum else free_port()
        self.broker_port = free_port() if broker else None
        self.properties = self._properties(extra or {})
        self._write_config()

    def _properties(self, extra: Mapping[str, str]) -> dict[str, str]:
        p = self.controller_port
        props = {
            "process.roles": "broker,controller" if self.broker else "controller",
            "node.id": str(self.node_id),
            "controller.quorum.voters": ",".join(
                f"{n}@127.0.0.1:{port}" for n, port in sorted((self.quorum or {
                    self.node_id: p}).items())),
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "metadata.log.dir": str(self.metadata_log_dir),
            "log.dirs": str(self.metadata_log_dir),
            "metadata.max.idle.interval.ms": "500",
        }
        if self.broker:
            props["listeners"] = f"PLAINTEXT://127.0.0.1:{self.broker_port},CONTROLLER://127.0.0.1:{p}"
            props["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{self.broker_port}"
            props["inter.broker.listener.name"] = "PLAINTEXT"
            props["offsets.topic.replication.factor"] = "1"
            props["transaction.state.log.replication.factor"] = "1"
            props["transaction.state.log.min.isr"] = "1"
            props["group.initial.rebalance.delay.ms"] = "0"
        else:
            props["listeners"] = f"CONTROLLER://127.0.0.1:{p}"
        props.update(extra)
        return props

    @property
    def bootstrap_servers(self) -> str:
        """`host:port` of the broker listener (only with `broker=True`)."""
        if self.broker_port is None:
            raise AssertionError("this node runs no broker")
        return f"127.0.0.1:{self.broker_port}"

    def _ready(self) -> bool:
        ports = [self.controller_port] + ([self.broker_port] if self.broker_port else [])
        return ("Kafka Server started" in self.launched_log_text()
                and all(_port_open(p) for p in ports))



REPLAY_FAILURES = (
    "publishing fault", "Tried to apply", "MetadataParseException", "Unknown control record",
    "truncat",
)


@contextlib.contextmanager
def kafka_quorum(
    workdir: Path,
    dirs: Mapping[int, Path],
    *,
    heap: str = "320m",
    extra: Mapping[str, str] | None = None,
) -> Iterator[list[KafkaController]]:
    """A static quorum of 3.9.1 controllers, one per voter dir (node id -> metadata.log.dir).

    Every JVM is launched before any is waited for (a voter cannot start alone); all are
    stopped on exit, whatever happened.
    """
    quorum = {n: free_port() for n in dirs}
    nodes = [KafkaController(Path(workdir) / f"node{n}", d, node_id=n, quorum=quorum, heap=heap,
                             extra=extra)
             for n, d in dirs.items()]
    try:
        for node in nodes:
            node.launch()
        for node in nodes:
            node.wait_started()
        yield nodes
    finally:
        for node in nodes:
            node.stop()


def assert_replayed_cleanly(node: KafkaController) -> None:
    """Fail if the node's log shows a record it could not replay or a truncated log."""
    log = node.log_text()
    for bad in REPLAY_FAILURES:
        assert bad not in log, f"node {node.node_id}: {bad!r}\n{log[-4000:]}"

def admin_tool(main_class: str, *args: str, timeout: float = 120.0) -> str:
    """Run one of Kafka's admin tools (ConfigCommand, AclCommand, ...) and return its stdout.

    The tools print errors and still exit 0 in some versions, so a line starting with "Error"
    fails the call too: a rehearsal must not go on with a tree the tool did not write.

    Args:
        main_class: e.g. `kafka.admin.ConfigCommand`.
        *args: its arguments (typically starting with `--bootstrap-server HOST:PORT`).
        timeout: seconds before the tool is killed.

    Raises:
        AssertionError: the tool exited non-zero or reported an error (with its output).
    """
    proc = run_kafka_class(main_class, *args, timeout=timeout)
    bad = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("Error")]
    if bad:
        raise AssertionError(
            f"{main_class} {' '.join(args)} reported an error\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    return proc.stdout


def nodes_failure(why: str, nodes: Sequence[_KafkaProcess]) -> AssertionError:
    """An AssertionError saying `why`, with the tail of each node's log (a cluster-wide
    failure has no one node to blame)."""
    tails = "".join(f"\n--- {n._label} ({n.workdir}) server.log tail ---\n"
                    f"{n.log_text()[-4000:]}" for n in nodes)
    return AssertionError(f"{why}{tails}")


_KafkaProcessT = TypeVar("_KafkaProcessT", bound=_KafkaProcess)


def first_node_logging(nodes: Sequence[_KafkaProcessT], text: str, what: str,
                       timeout_s: float = 180.0) -> _KafkaProcessT:
    """The first of `nodes` whose server.log holds `text` (e.g. "Completed transition to
    Leader"), polled every 0.5 s.

    Raises:
        AssertionError: none logged it within `timeout_s` (saying `what`, with each log's tail).
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for node in nodes:
            if text in node.log_text():
                return node
        time.sleep(0.5)
    raise nodes_failure(f"{what} within {timeout_s:.0f} s", nodes)


def wait_until_serving(brokers: Sequence[KafkaZkBroker], timeout_s: float = 180.0) -> None:
    """Wait until every ZooKeeper-mode broker's Metadata names a controller among `brokers` and
    exactly `brokers`.

    "[KafkaServer id=N] started" comes before the controller has handled N's registration and
    sent its UpdateMetadata, and a ZooKeeper-mode broker learns other brokers only from that
    update. Requests sent earlier fail: CreateTopics without an assignment picks replicas from
    the controller's cache ("Replication factor: 3 larger than available brokers: 2"), and a
    CI run's create_topics waited 120 s for a controller it could not see. Fails at once if a
    JVM exited, and after `timeout_s` with what each broker answered and every broker's log.
    """
    from confluent_kafka.admin import AdminClient  # the canary's client; imported when used

    want = {b.broker_id for b in brokers}
    admins = {b.broker_id: AdminClient({"bootstrap.servers": b.bootstrap_servers})
              for b in brokers}
    deadline = time.monotonic() + timeout_s
    seen: dict[int, str] = {}
    while True:
        for b in brokers:
            b.assert_running()
            try:
                meta = admins[b.broker_id].list_topics(timeout=10)
            except Exception as exc:  # noqa: BLE001 - retried until the deadline, then shown
                seen[b.broker_id] = f"Metadata failed: {exc}"
                continue
            if meta.controller_id in want and set(meta.brokers) == want:
                seen.pop(b.broker_id, None)
            else:
                seen[b.broker_id] = (f"controller {meta.controller_id}, "
                                     f"brokers {sorted(meta.brokers)}")
        if not seen:
            return
        if time.monotonic() > deadline:
            raise nodes_failure(f"ZooKeeper-mode brokers not serving within {timeout_s:.0f}s "
                                f"(want brokers {sorted(want)} and a controller among them): "
                                f"{seen}", brokers)
        time.sleep(0.5)  # polling Metadata; the cluster has no event to wait on


class KafkaZkBroker(_KafkaProcess):
    """A real Kafka 3.9.1 broker in ZooKeeper mode, as a context manager.

    It registers itself in ZooKeeper (ephemeral `/brokers/ids/N`), becomes the ZK controller
    of its chroot and writes every znode Kafka writes — the trees zk2kraft migrates, written by
    the real thing rather than by the sample generator. Entering starts `kafka.Kafka` and
    returns once the server logs "[KafkaServer id=N] started" and its port answers; leaving
    stops it (SIGTERM, then SIGKILL). Its log is `WORKDIR/logs/server.log`; a failed start
    raises with the log's tail.

    Args:
        workdir: private directory for config, data and logs (kept for post-mortems).
        zookeeper_connect: Kafka's `zookeeper.connect`, chroot included ("127.0.0.1:P/t_x").
        broker_id: `broker.id`.
        listeners: more listeners beside the inter-broker PLAINTEXT one: name -> security
            protocol (e.g. {"EXTERNAL": "SASL_PLAINTEXT"}), each on a free port
            (`listener_ports`); configure their SASL mechanisms through `extra`.
        extra: more server properties (override the generated ones).
        heap: JVM -Xmx.
        start_timeout: seconds to wait for start-up.
        dist: another ZooKeeper-mode release to run (`tests.support.kraft.kafka_dist("2.8")`,
            the version matrix's sources) instead of 3.9.1.
    """

    def __init__(
        self,
        workdir: Path,
        zookeeper_connect: str,
        *,
        broker_id: int = 0,
        listeners: Mapping[str, str] | None = None,
        extra: Mapping[str, str] | None = None,
        heap: str = "512m",
        start_timeout: float = 120.0,
        dist: KafkaDist | None = None,
    ) -> None:
        super().__init__(workdir, heap=heap, start_timeout=start_timeout)
        self.broker_id = broker_id
        self.dist = dist
        self._label = f"ZK-mode broker {broker_id}"
        self.port = free_port()
        self.listener_ports = {"PLAINTEXT": self.port}
        self.listener_ports.update({name: free_port() for name in listeners or {}})
        protocols = {"PLAINTEXT": "PLAINTEXT", **(listeners or {})}
        urls = ",".join(f"{n}://127.0.0.1:{p}" for n, p in self.listener_ports.items())
        self.properties = {
            "broker.id": str(broker_id),
            "zookeeper.connect": zookeeper_connect,
            "zookeeper.session.timeout.ms": "18000",
            "listeners": urls,
            "advertised.listeners": urls,
            "listener.security.protocol.map": ",".join(f"{n}:{p}" for n, p in protocols.items()),
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.workdir / "data"),
            "num.partitions": "1",
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "3",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            **(extra or {}),
        }
        self._write_config()

    @property
    def bootstrap_servers(self) -> str:
        """`host:port` of the PLAINTEXT listener."""
        return f"127.0.0.1:{self.port}"

    def _ready(self) -> bool:
        # restarted with `process.roles=broker` (rolled to KRaft mode, Kafka's migration step)
        # it runs BrokerServer, which logs "Kafka Server started" instead
        started = ("Kafka Server started" if "process.roles" in self.properties
                   else f"[KafkaServer id={self.broker_id}] started")
        return started in self.launched_log_text() and _port_open(self.port)


_FilledT = TypeVar("_FilledT")


def fill_and_stop(brokers: Sequence[KafkaZkBroker], stop_order: Sequence[int],
                  fill: Callable[[str], _FilledT]) -> _FilledT:
    """Start ZooKeeper-mode `brokers`, run `fill(bootstrap)` once they serve, then stop them
    cleanly (controlled shutdown) one by one in `stop_order` (broker ids), also when `fill`
    fails: the stopped cluster the offline rehearsals migrate.

    Returns:
        what `fill` returned (what clients saw before the stop).
    """
    try:
        for b in brokers:
            b.launch()
        for b in brokers:
            b.wait_started()
        wait_until_serving(brokers)
        return fill(brokers[0].bootstrap_servers)
    finally:
        for b in sorted(brokers, key=lambda b: stop_order.index(b.broker_id)):
            b.stop(timeout=90)  # controlled shutdown, one by one


def wait_unregistered(zk: Any, timeout_s: float = 60.0) -> None:
    """Wait until ZooKeeper (a started `KazooClient` on the cluster's chroot) lists no broker and
    no controller after `fill_and_stop`."""
    deadline = time.monotonic() + timeout_s
    while zk.get_children("/brokers/ids") or zk.exists("/controller"):
        assert time.monotonic() < deadline, "stopped brokers still registered"
        time.sleep(0.2)  # the ephemerals go with the sessions the stop closed
