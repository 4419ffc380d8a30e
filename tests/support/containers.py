"""Real ZooKeeper (and Kafka 3.9.1) in containers: docker-compose.test.yml through pytest-docker.

The images are built locally by scripts/install-containers.sh (Debian's packages via debootstrap;
no registry is reachable here), and the engine runs without a bridge: every service uses the
host's network and binds 127.0.0.1 on ports chosen at run time (`compose_ports`, handed to
Compose as variables). pytest-docker owns the Compose project (its `docker_services` fixture runs
`down` at the end of the session); `ComposeProject` drives it — `up` of the services a fixture
needs, container health — and does the faults a rehearsal needs as container operations:
`docker pause` (a frozen member, as a GC pause or a hung VM looks), `docker kill`, `docker
restart`.

`DockerZkServer` and `DockerZkEnsemble` have the API of the process backend's `ZkServer` and
`ZkEnsemble` (tests/support/zk.py), so every ZooKeeper-facing test runs on either backend.
A container that does not come up raises `ZkStartError` with its `docker logs` tail.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.ports import free_ports
from tests.support.zk import (
    LOG_TAIL_LINES,
    START_TIMEOUT_S,
    ZkStartError,
    _server_mode,
    _wait,
    four_letter,
)

__all__ = [
    "COMPOSE_FILE",
    "IMAGES",
    "ComposeProject",
    "DockerError",
    "DockerZkEnsemble",
    "DockerZkServer",
    "compose_command",
    "compose_ports",
    "docker",
    "docker_problem",
    "engine_command_line",
]

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker-compose.test.yml"
ZK_IMAGE = "zk2kraft/zookeeper:3.8"
KAFKA_IMAGE = "zk2kraft/kafka:3.9.1"
IMAGES = (ZK_IMAGE, KAFKA_IMAGE)
ENSEMBLE = ("zk1", "zk2", "zk3")
STOP_TIMEOUT_S = 10
START_TIMEOUT_CONTAINER_S = max(START_TIMEOUT_S, 120.0)
"""Container start-up bound: creation, the JVM and the health check's own interval add up; on a
2-core machine shared by several test runs a ZooKeeper JVM was seen taking 40 s to log a line."""


class DockerError(RuntimeError):
    """A docker or compose command failed; the message has the command and its output."""


def docker(*args: str, timeout_s: float = 120.0, check: bool = True) -> str:
    """Run the docker CLI and return its stdout.

    Raises:
        DockerError: non-zero exit (with `check`) or time-out, naming the command and stderr.
    """
    cmd = ["docker", *args]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise DockerError(f"{' '.join(cmd)}: no answer within {timeout_s:.0f}s") from exc
    if check and proc.returncode != 0:
        raise DockerError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def compose_command() -> str:
    """Compose v1 (`docker-compose`, Debian's package) where installed, else the v2 plugin."""
    return "docker-compose" if shutil.which("docker-compose") else "docker compose"


def docker_problem(timeout_s: float = 15.0) -> str | None:
    """Why the container backend cannot run here, or None when it can.

    It can when the docker CLI is there, an engine answers `docker info`, Compose runs and the
    local images exist. The reason names the fix (scripts/install.sh does all of it).
    """
    if shutil.which("docker") is None:
        return "no `docker` CLI on PATH (scripts/install.sh installs Debian's docker.io)"
    try:
        docker("info", "-f", "{{.ServerVersion}}", timeout_s=timeout_s)
    except DockerError as exc:
        return f"no Docker engine answers ({exc}); scripts/install.sh starts one"
    compose = compose_command().split() + ["version"]
    try:
        ok = subprocess.run(compose, capture_output=True, timeout=timeout_s,
                            check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        return "Compose does not run (scripts/install.sh installs Debian's docker-compose)"
    for image in IMAGES:
        if docker("image", "inspect", image, check=False, timeout_s=timeout_s) == "":
            return f"image {image} is not built (scripts/install.sh builds it)"
    return None


def engine_command_line() -> list[str]:
    """The running dockerd's command line (from /proc, via the engine's pid file)."""
    pid = Path("/var/run/docker.pid").read_text().strip()
    return Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").decode().split("\0")


def compose_ports() -> dict[str, str]:
    """Free loopback ports for every port variable of docker-compose.test.yml.

    One draw for all of them (distinct ports); the ensemble's peer and election ports go into
    ZK_SERVERS, the controllers' into KRAFT_VOTERS (node ids 3000..3002).
    """
    p = [str(n) for n in free_ports(15)]
    return {
        "ZK_PORT": p[0],
        "ZK1_PORT": p[1], "ZK2_PORT": p[2], "ZK3_PORT": p[3],
        "ZK_SERVERS": f"1={p[4]}:{p[5]},2={p[6]}:{p[7]},3={p[8]}:{p[9]}",
        "KAFKA_BROKER_PORT": p[10],
        "KRAFT1_PORT": p[11], "KRAFT2_PORT": p[12], "KRAFT3_PORT": p[13],
        "KRAFT_VOTERS": f"3000@127.0.0.1:{p[11]},3001@127.0.0.1:{p[12]},3002@127.0.0.1:{p[13]}",
    }


_ENV_LOCK = threading.Lock()


@contextmanager
def _environment(env: Mapping[str, str] | None) -> Iterator[None]:
    """Compose reads its variables from the environment pytest-docker's shell inherits."""
    if not env:
        yield
        return
    with _ENV_LOCK:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class ComposeProject:
    """The session's Compose project (pytest-docker's `docker_services`) and its containers."""

    def __init__(self, services: Any) -> None:
        self._executor = services._docker_compose  # pytest-docker's DockerComposeExecutor
        self.name: str = self._executor._compose_project_name
        self._ids: dict[str, str] = {}

    def compose(self, subcommand: str, env: Mapping[str, str] | None = None) -> str:
        """Run `COMPOSE -f docker-compose.test.yml -p PROJECT SUBCOMMAND` through pytest-docker."""
        try:
            with _environment(env):
                out: bytes = self._executor.execute(subcommand)
        except Exception as exc:  # pytest-docker raises a bare Exception with the output
            raise DockerError(str(exc)) from exc
        return out.decode("utf-8", "replace")

    def up(self, *services: str, env: Mapping[str, str] | None = None) -> None:
        """Create and start `services` (detached); existing containers are kept as they are."""
        self.compose("up -d --no-recreate " + " ".join(services), env)
        for s in services:
            self._ids.pop(s, None)

    def down(self, *services: str) -> None:
        """Stop and remove `services`' containers (the rest of the project stays)."""
        names = " ".join(services)
        self.compose(f"rm -s -f -v {names}")
        for s in services:
            self._ids.pop(s, None)

    def container_id(self, service: str) -> str:
        """The id of `service`'s container ("" when it has none)."""
        if service not in self._ids:
            # Compose's labels, asked of the engine directly: `docker-compose ps` starts a Python
            # interpreter per call (about a second), too slow to poll.
            cid = docker("ps", "-aq", "--filter", f"label=com.docker.compose.project={self.name}",
                         "--filter", f"label=com.docker.compose.service={service}").split()
            if not cid:
                return ""
            self._ids[service] = cid[0]
        return self._ids[service]

    def _id(self, service: str) -> str:
        cid = self.container_id(service)
        if not cid:
            raise DockerError(f"service {service} has no container (not up)")
        return cid

    def inspect(self, service: str, fmt: str) -> str:
        """`docker inspect -f FMT` of the service's container."""
        return docker("inspect", "-f", fmt, self._id(service)).strip()

    def status(self, service: str) -> str:
        """Container state ("running", "paused", "exited", ...) or "" without a container."""
        if not self.container_id(service):
            return ""
        return self.inspect(service, "{{.State.Status}}")

    def health(self, service: str) -> str:
        """Compose health check's verdict: "starting", "healthy", "unhealthy"."""
        return self.inspect(service, "{{if .State.Health}}{{.State.Health.Status}}{{end}}")

    def logs(self, service: str, lines: int = LOG_TAIL_LINES) -> str:
        """Tail of the container's output (docker logs), for failure messages."""
        cid = self.container_id(service)
        if not cid:
            return f"({service}: no container)"
        proc = subprocess.run(["docker", "logs", "--tail", str(lines), cid], capture_output=True,
                              text=True, timeout=60, check=False)
        return (proc.stdout + proc.stderr).strip()

    def wait_healthy(self, service: str, timeout_s: float, also: Any = None) -> None:
        """Wait until the health check passes (and `also()`, if given).

        Raises:
            ZkStartError: the container exited or stayed unhealthy; has its log tail.
        """
        def ready() -> bool:
            return self.health(service) == "healthy" and (also is None or also())

        def alive() -> bool:
            return self.status(service) in ("running", "paused")

        if not _wait(ready, timeout_s, alive):
            health_log = self.inspect(
                service, "{{if .State.Health}}{{range .State.Health.Log}}{{.Output}}{{end}}{{end}}")
            raise ZkStartError(
                f"container {service} ({self.status(service) or 'none'}) not healthy within "
                f"{timeout_s:.0f}s; last health output: {health_log.strip()[-300:]!r}\n"
                f"--- docker logs {service} (tail) ---\n{self.logs(service)}"
            )

    def pause(self, service: str) -> None:
        """`docker pause`: every process of the container frozen (cgroup freezer)."""
        docker("pause", self._id(service))

    def unpause(self, service: str) -> None:
        """`docker unpause`."""
        docker("unpause", self._id(service))

    def kill(self, service: str) -> None:
        """`docker kill` (SIGKILL: a crash)."""
        docker("kill", self._id(service))

    def stop(self, service: str) -> None:
        """`docker stop` (SIGTERM, SIGKILL after a bound)."""
        docker("stop", "-t", str(STOP_TIMEOUT_S), self._id(service))

    def start(self, service: str) -> None:
        """Start the existing container again (`docker start`; data inside it is kept)."""
        docker("start", self._id(service))

    def restart(self, service: str) -> None:
        """`docker restart` (stop, then start the same container)."""
        docker("restart", "-t", str(STOP_TIMEOUT_S), self._id(service))

    def addresses(self, service: str) -> list[str]:
        """IP addresses the engine gave the container (none with `network_mode: host`)."""
        out = self.inspect(service, "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}")
        return out.split()

    def pid(self, service: str) -> int:
        """The container's main process on the host (the server's JVM: the entrypoint execs)."""
        return int(self.inspect(service, "{{.State.Pid}}"))


def _serving_mode(port: int, modes: Sequence[str]) -> bool:
    return _server_mode("127.0.0.1", port) in modes


class DockerZkServer:
    """The compose service `zk`: one standalone server, the container twin of `ZkServer`."""

    backend = "docker"
    service = "zk"

    def __init__(self, project: ComposeProject, port: int) -> None:
        self.project = project
        self.port = port
        self.connect = f"127.0.0.1:{port}"

    def start(self, timeout_s: float = START_TIMEOUT_CONTAINER_S) -> DockerZkServer:
        """`up` the container and wait for its health check and a standalone `srvr`.

        Raises:
            ZkStartError: with the container's log tail.
        """
        try:
            self.project.up(self.service)
        except DockerError as exc:
            raise ZkStartError(f"docker-compose up {self.service}: {exc}") from exc
        self.project.wait_healthy(self.service, timeout_s,
                                  functools.partial(_serving_mode, self.port, ("standalone",)))
        return self

    def ruok(self) -> str:
        """The server's answer to `ruok`."""
        return four_letter("127.0.0.1", self.port, "ruok")

    def mode(self) -> str:
        """"standalone" once the server serves requests."""
        return _server_mode("127.0.0.1", self.port)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """Tail of the container's log."""
        return self.project.logs(self.service, lines)

    def stop(self, keep_logs: bool = False) -> None:
        """Nothing: pytest-docker removes the project's containers at the end of the session."""


class DockerZkEnsemble:
    """The compose services `zk1..zk3`, the container twin of `ZkEnsemble` (same API).

    Faults are container operations: `kill` is `docker kill`, `stop` `docker stop`, `pause`
    `docker pause`, `restart` `docker restart`; data survives all of them (it lives in the
    container), as a server's disk survives a crash.
    """

    backend = "docker"
    services = ENSEMBLE

    def __init__(self, project: ComposeProject, ports: Sequence[int]) -> None:
        self.project = project
        self._ports = list(ports)
        self.connect = ",".join(f"127.0.0.1:{p}" for p in self._ports)
        self.workdir = None  # logs live with the containers (`docker logs`)

    @property
    def ports(self) -> list[int]:
        """Client ports of the members, by index."""
        return list(self._ports)

    def member_connect(self, i: int) -> str:
        """Connect string of member `i` alone."""
        return f"127.0.0.1:{self._ports[i]}"

    def mode(self, i: int) -> str:
        """Member `i`'s quorum role from `srvr` ("" when it does not answer)."""
        return _server_mode("127.0.0.1", self._ports[i])

    def serving(self, i: int) -> bool:
        """True when member `i` serves as leader or follower of a quorum."""
        return self.mode(i) in ("leader", "follower")

    def _wait_serving(self, members: Sequence[int], timeout_s: float) -> None:
        for m in members:
            self.project.wait_healthy(
                self.services[m], timeout_s,
                functools.partial(_serving_mode, self._ports[m], ("leader", "follower")))

    def start(
        self, i: int | None = None, timeout_s: float = START_TIMEOUT_CONTAINER_S
    ) -> DockerZkEnsemble:
        """Bring member `i` (or all) up — create, start or unpause as needed — and wait until it
        passes its health check and serves in a quorum.

        Raises:
            ZkStartError: a member did not come up; has its container log tail.
        """
        members = list(range(len(self._ports))) if i is None else [i]
        try:
            missing = [self.services[m] for m in members if not self.project.status(
                self.services[m])]
            if missing:
                self.project.up(*missing)
            for m in members:
                state = self.project.status(self.services[m])
                if state == "paused":
                    self.project.unpause(self.services[m])
                elif state != "running":
                    self.project.start(self.services[m])
        except DockerError as exc:
            raise ZkStartError(f"ensemble container: {exc}") from exc
        self._wait_serving(members, timeout_s)
        return self

    def stop(self, i: int | None = None) -> None:
        """`docker stop` member `i`, or every member."""
        for m in range(len(self._ports)) if i is None else [i]:
            if self.project.status(self.services[m]) == "paused":
                self.project.unpause(self.services[m])
            self.project.stop(self.services[m])

    def kill(self, i: int) -> None:
        """`docker kill` member `i` (a crash)."""
        self.project.kill(self.services[i])

    def pause(self, i: int) -> None:
        """`docker pause` member `i`: frozen, its connections open but silent."""
        self.project.pause(self.services[i])

    def unpause(self, i: int) -> None:
        """`docker unpause` member `i`."""
        self.project.unpause(self.services[i])

    def restart(self, i: int, timeout_s: float = START_TIMEOUT_CONTAINER_S) -> None:
        """`docker restart` member `i` and wait until it serves in a quorum again."""
        self.project.restart(self.services[i])
        self._wait_serving([i], timeout_s)

    def container_id(self, i: int) -> str:
        """Member `i`'s container id."""
        return self.project.container_id(self.services[i])

    def log_tail(self, i: int, lines: int = LOG_TAIL_LINES) -> str:
        """Tail of member `i`'s container log."""
        return self.project.logs(self.services[i], lines)

    def close(self, keep_logs: bool = False) -> None:
        """Nothing: pytest-docker removes the project's containers at the end of the session."""

