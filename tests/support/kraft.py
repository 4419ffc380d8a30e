"""KRaft-mode Kafka nodes of either release, for the offline rehearsals (3.9.1 and 4.1).

`tests/support/kafka.py` runs Kafka 3.9.1 from `tests/kafka/jars`; the rehearsal straight to
Kafka 4.x also needs 4.1 from `tests/kafka/jars-4.1` (`tests/kafka/fetch.sh 4.1`), which logs
through log4j2 instead of reload4j. A `KafkaDist` names one release's jars and logging flags;
`KraftNode` is a controller or a broker of that release on loopback ports, with the start/wait/
stop/log handling of `_KafkaProcess`; `run_tool` runs one of its command-line classes.

A missing jar cache is a test FAILURE naming the fetch command, never a skip.
"""

from __future__ import annotations

import subprocess
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tests.support.kafka import (
    KAFKA_DIR,
    KafkaJarsMissing,
    _java,
    _KafkaProcess,
    _port_open,
    archive_flags,
)

__all__ = ["KAFKA_39", "KAFKA_41", "KafkaDist", "KraftNode", "config_command", "kafka_dist",
           "run_tool", "stray_dirs"]


@dataclass(frozen=True, slots=True)
class KafkaDist:
    """One Kafka release as jars: where they are, how it logs, how to fetch it."""

    version: str
    jars: Path
    server_logging: tuple[str, ...]
    tool_logging: tuple[str, ...]
    fetch: str
    # Properties every controller of this release gets in tests. Kafka 4's EventPerformanceMonitor
    # logs ERROR for any controller event over controller.performance.always.log.threshold.ms
    # (2 s by default): on a loaded 2-core CI machine that is scheduling, not a fault of the log,
    # and the rehearsals fail on ERROR lines. 3.9.1 has no such monitor (nor the property).
    controller_properties: tuple[tuple[str, str], ...] = ()

    def classpath(self) -> str:
        """The `java -cp` value.

        Raises:
            KafkaJarsMissing: the cache is missing (the message names the fetch command).
        """
        if not (self.jars / ".complete").is_file() or not any(self.jars.glob("kafka_2.13-*.jar")):
            raise KafkaJarsMissing(
                f"Kafka {self.version} jars not found in {self.jars}: run {self.fetch} "
                "(needs mvn and access to Maven Central)"
            )
        return str(self.jars / "*")


KAFKA_39 = KafkaDist(
    "3.9.1", KAFKA_DIR / "jars",
    (f"-Dlog4j.configuration=file:{KAFKA_DIR / 'log4j.properties'}",),
    (f"-Dlog4j.configuration=file:{KAFKA_DIR / 'tools-log4j.properties'}",),
    "tests/kafka/fetch.sh",
)
KAFKA_41 = KafkaDist(
    "4.1", KAFKA_DIR / "jars-4.1",
    (f"-Dlog4j2.configurationFile={KAFKA_DIR / 'log4j2-server.properties'}",),
    (f"-Dlog4j2.configurationFile={KAFKA_DIR / 'log4j2-tools.properties'}",),
    "tests/kafka/fetch.sh 4.1",
    (("controller.performance.always.log.threshold.ms", "600000"),),
)


def kafka_dist(line: str) -> KafkaDist:
    """The release of one Kafka line (`2.8`, `3.6`, `4.4`, ...) as `tests/kafka/fetch.sh LINE`
    caches it in `tests/kafka/jars-LINE/`; 3.9 is the default cache (`KAFKA_39`). Kafka 4 logs
    through log4j2, the 2.x and 3.x lines through log4j 1 (reload4j)."""
    if line == "3.9":
        return KAFKA_39
    if line == "4.1":
        return KAFKA_41
    jars = KAFKA_DIR / f"jars-{line}"
    fetch = f"tests/kafka/fetch.sh {line}"
    if line.startswith("4."):
        return KafkaDist(line, jars, KAFKA_41.server_logging, KAFKA_41.tool_logging, fetch,
                         KAFKA_41.controller_properties)
    return KafkaDist(line, jars, KAFKA_39.server_logging, KAFKA_39.tool_logging, fetch)


def config_command(dist: KafkaDist) -> str:
    """ConfigCommand's class in this release: `kafka.admin.ConfigCommand` in core up to 4.1,
    `org.apache.kafka.tools.ConfigCommand` once moved to kafka-tools (4.4.0 has only that one);
    read from the release's own jars rather than from a version table."""
    tools = next(dist.jars.glob("kafka-tools-[0-9]*.jar"), None)
    if tools is not None:
        with zipfile.ZipFile(tools) as jar:
            if "org/apache/kafka/tools/ConfigCommand.class" in jar.namelist():
                return "org.apache.kafka.tools.ConfigCommand"
    return "kafka.admin.ConfigCommand"


def stray_dirs(log_dir: Path) -> list[str]:
    """The partition directories a KRaft broker renamed away as stray in `log_dir`: Kafka moves a
    replica whose topic id it cannot match (or that is not assigned to it) to
    `<dir>.<uuid>-stray` and starts the partition empty."""
    return sorted(p.name for p in log_dir.iterdir() if p.is_dir() and p.name.endswith("-stray"))


def run_tool(dist: KafkaDist, main_class: str, *args: str,
             timeout: float = 180.0) -> subprocess.CompletedProcess[str]:
    """Run one of the release's command-line classes; fail with its output if it exits != 0."""
    cmd = [_java(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
           *archive_flags(dist.jars), *dist.tool_logging, "-cp", dist.classpath(), main_class,
           *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError(
            f"{main_class} {' '.join(args)} exited {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
        )
    return proc


class KraftNode(_KafkaProcess):
    """A KRaft controller or broker of `dist` (static quorum), as a context manager.

    Args:
        workdir: private directory for config and logs.
        dist: the release to run.
        node_id: `node.id`.
        role: `controller` or `broker`.
        quorum: controller node id -> its port (every voter).
        log_dirs: `log.dirs` (a controller's = its metadata.log.dir).
        listeners: a broker's listeners beside PLAINTEXT: name -> security protocol, each on a
            free port (`listener_ports`).
        extra: more server properties (override the generated ones).
        heap: JVM -Xmx.
    """

    def __init__(
        self,
        workdir: Path,
        dist: KafkaDist,
        *,
        node_id: int,
        role: str,
        quorum: Mapping[int, int],
        log_dirs: Path,
        listeners: Mapping[str, str] | None = None,
        extra: Mapping[str, str] | None = None,
        heap: str = "320m",
        start_timeout: float = 180.0,
    ) -> None:
        super().__init__(workdir, heap=heap, start_timeout=start_timeout)
        from tests.support.ports import free_port

        self.dist = dist
        self.node_id = node_id
        self.role = role
        self._label = f"{role} {node_id}"
        voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(quorum.items()))
        protocols = {"CONTROLLER": "PLAINTEXT"}
        props = {
            "process.roles": role,
            "node.id": str(node_id),
            "controller.quorum.voters": voters,
            "controller.listener.names": "CONTROLLER",
            "log.dirs": str(log_dirs),
        }
        if role == "controller":
            self.listener_ports = {"CONTROLLER": quorum[node_id]}
            props["metadata.log.dir"] = str(log_dirs)
            props.update(dist.controller_properties)
        else:
            protocols["PLAINTEXT"] = "PLAINTEXT"
            protocols.update(listeners or {})
            self.listener_ports = {name: free_port() for name in protocols if name != "CONTROLLER"}
            urls = ",".join(f"{n}://127.0.0.1:{p}" for n, p in self.listener_ports.items())
            props.update({"listeners": urls, "advertised.listeners": urls,
                          "inter.broker.listener.name": "PLAINTEXT"})
        if role == "controller":
            props["listeners"] = f"CONTROLLER://127.0.0.1:{quorum[node_id]}"
        props["listener.security.protocol.map"] = ",".join(
            f"{n}:{p}" for n, p in protocols.items())
        props.update(extra or {})
        self.properties = props
        self._write_config()

    @property
    def bootstrap_servers(self) -> str:
        """`host:port` of a broker's PLAINTEXT listener."""
        return f"127.0.0.1:{self.listener_ports['PLAINTEXT']}"

    def launch(self) -> None:
        """Start the JVM of this node's release without waiting."""
        cmd = [*self.jvm_command(), *archive_flags(self.dist.jars), *self.dist.server_logging,
               f"-Dkafka.logs.dir={self.logs_dir}",
               "-cp", self.dist.classpath(), "kafka.Kafka", str(self.config_path)]
        self._spawn(cmd)

    def _ready(self) -> bool:
        return "Kafka Server started" in self.launched_log_text() and all(
            _port_open(p) for p in self.listener_ports.values())

    def mark(self) -> int:
        """The log's length now: `errors(until=mark)` then covers what was logged before."""
        return len(self.log_text())

    def errors(self, since: int = 0, until: int | None = None) -> list[str]:
        """The ERROR entries logged between two `mark()`s, each with its continuation lines
        (the exception and its cause), as one string."""
        out: list[str] = []
        for line in self.log_text()[since:until].splitlines():
            if line.startswith("[") and "] " in line[:40]:
                if "] ERROR " in line:
                    out.append(line)
                    continue
                if out and not out[-1].endswith("\x00"):
                    out[-1] += "\x00"  # the entry ended
            elif out and not out[-1].endswith("\x00"):
                out[-1] += "\n" + line
        return [e.removesuffix("\x00") for e in out]

    def leaders_elected(self) -> int:
        """How many times this node became the Raft leader (a controller)."""
        return self.log_text().count("Completed transition to Leader(")
