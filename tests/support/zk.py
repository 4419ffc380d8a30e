"""Real ZooKeeper for the tests, as local processes: Debian's ZooKeeper 3.8 run with `java -cp`.

This is the backend for machines with no Docker engine; where an engine answers, the fixtures
run the same topologies in containers instead (tests/support/containers.py, through pytest-docker
and docker-compose.test.yml). `zk_backend()` chooses; `ZK2KRAFT_ZK_BACKEND=process|docker` forces.

Each server runs `java -cp /usr/share/java/zookeeper.jar ... QuorumPeerMain zoo.cfg` exactly as
Debian's `zkServer.sh` does, in its own process group, with a generated `zoo.cfg` in a temporary
directory, free loopback ports, the four-letter words enabled, the admin server off and a small
heap. Readiness is `ruok` → `imok` (and, for an ensemble, every member in a quorum role), bounded
in time; a server that does not come up raises `ZkStartError` carrying the tail of its log, which
the fixtures turn into `pytest.fail` (never a skip). Fault helpers (`expire_session`, and the
ensemble's `kill/stop/start/pause/unpause/restart`, the same API as the container ensemble) live
here too, so every fault test injects faults the same way on either backend.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.protocol.connection import _CONNECTION_DROP
from kazoo.protocol.states import KazooState
from kazoo.retry import KazooRetry

from tests.support.ports import free_ports
from tests.support.process_group import LOG_TAIL_LINES, log_tail, stop_group

__all__ = [
    "ZkEnsemble",
    "ZkProcess",
    "ZkServer",
    "ZkStartError",
    "client_in_new_chroot",
    "drop_connection",
    "expire_session",
    "four_letter",
    "tree_state",
    "wait_until",
    "zk_backend",
    "zookeeper_classpath",
]

ZK_JAR = Path(os.environ.get("ZK2KRAFT_ZK_JAR", "/usr/share/java/zookeeper.jar"))
"""Debian's jar; `ZK2KRAFT_ZK_JAR` points elsewhere (another install, or a test of failure)."""
ZK_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
START_TIMEOUT_S = 45.0
STOP_TIMEOUT_S = 10.0


class ZkStartError(RuntimeError):
    """A ZooKeeper server did not answer `imok` in time (message carries the log tail)."""


def zookeeper_classpath() -> str:
    """Return the classpath Debian's zkEnv.sh builds, plus slf4j-simple so the log says something.

    Debian's `zookeeper.jar` names its dependencies in its manifest `Class-Path`, so the jar alone
    is enough to run; slf4j-simple (from libslf4j-java, a dependency of the package) makes the
    server log to stderr, which we capture into `zookeeper.log` for failure reports.

    Raises:
        ZkStartError: Debian's ZooKeeper is not installed (run scripts/install.sh).
    """
    if not ZK_JAR.is_file():
        raise ZkStartError(
            f"{ZK_JAR} not found: Debian's 'zookeeper' package is not installed "
            "(run scripts/install.sh)"
        )
    parts = [str(ZK_JAR)]
    simple = Path("/usr/share/java/slf4j-simple.jar")
    if simple.is_file():
        parts.append(str(simple))
    return ":".join(parts)


def four_letter(host: str, port: int, word: str, timeout_s: float = 2.0) -> str:
    """Send one of ZooKeeper's four-letter words and return the answer ("" if none).

    Never raises on network errors: a server that is not up simply has no answer yet.
    """
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as s:
            s.sendall(word.encode("ascii"))
            chunks: list[bytes] = []
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError:
        return ""
    return b"".join(chunks).decode("utf-8", "replace")


def _server_mode(host: str, port: int) -> str:
    """Return the `Mode:` line of `srvr` ("standalone", "leader", "follower") or ""."""
    for line in four_letter(host, port, "srvr").splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return ""


def _wait(
    check: Callable[[], bool],
    timeout_s: float,
    alive: Callable[[], bool],
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Poll `check` until it is true, the process died, or `timeout_s` passed."""
    deadline = clock() + timeout_s
    while clock() < deadline:
        if check():
            return True
        if not alive():
            return check()
        time.sleep(0.05)  # polling a real server, bounded by the deadline
    return check()


def wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    """Poll a real server's state until `check()` holds or `timeout_s` passes; return it."""
    return _wait(check, timeout_s, lambda: True)


def client_in_new_chroot(connect: str, prefix: str, start_timeout_s: float = 30.0, *,
                         session_timeout_s: float = 15.0,
                         connection_retry: KazooRetry | None = None
                         ) -> tuple[str, KazooClient]:
    """Create a fresh chroot `/<prefix>_<hex>` on the server at `connect` (through a short-lived
    session) and return the connect string with that chroot and a started client inside it.
    The caller owns the client: a sample generator's session owns the ephemeral broker znodes.

    Args:
        session_timeout_s / connection_retry: the client's (kazoo's `timeout` and
            `connection_retry`), for a session that must outlive a server's restart.
    """
    chroot = f"/{prefix}_{uuid.uuid4().hex[:10]}"
    admin = KazooClient(hosts=connect, timeout=15)
    admin.start(timeout=start_timeout_s)
    try:
        admin.create(chroot)
    finally:
        admin.stop()
        admin.close()
    client = KazooClient(hosts=connect + chroot, timeout=session_timeout_s,
                         connection_retry=connection_retry)
    client.start(timeout=start_timeout_s)
    return connect + chroot, client


@dataclass
class ZkProcess:
    """One ZooKeeper server process (standalone, or one member of an ensemble).

    Attributes:
        sid: server id (`myid`), 0 for a standalone server.
        client_port: loopback port clients connect to.
        workdir: directory holding `zoo.cfg`, `data/` and `zookeeper.log`.
        heap: JVM `-Xmx` value (small: the machine is shared).
    """

    sid: int
    client_port: int
    workdir: Path
    config: str
    heap: str = "256m"
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def log_path(self) -> Path:
        """Where the server's stdout/stderr go."""
        return self.workdir / "zookeeper.log"

    @property
    def connect(self) -> str:
        """`127.0.0.1:PORT` for this server alone."""
        return f"127.0.0.1:{self.client_port}"

    def write_config(self) -> Path:
        """Write `zoo.cfg` (and `data/myid` for ensemble members); return the cfg path."""
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        if self.sid:
            (data / "myid").write_text(f"{self.sid}\n")
        cfg = self.workdir / "zoo.cfg"
        cfg.write_text(self.config.replace("@DATADIR@", str(data)))
        return cfg

    def alive(self) -> bool:
        """True while the JVM runs."""
        return self.proc is not None and self.proc.poll() is None

    def spawn(self) -> None:
        """Start the JVM in its own process group (so teardown can kill the whole group)."""
        if self.alive():
            return
        cfg = self.write_config()
        # With setpriv (util-linux), the JVM gets SIGTERM if the process that started it dies
        # (even by SIGKILL), so a killed test run leaves no ZooKeeper behind on a shared box.
        # Linux ties this to the *thread* that forked: start servers from a long-lived thread.
        guard = ["setpriv", "--pdeathsig", "TERM"] if shutil.which("setpriv") else []
        cmd = [
            *guard,
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Dzookeeper.admin.enableServer=false",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
            "-Dorg.slf4j.simpleLogger.showDateTime=true",
            "-cp",
            zookeeper_classpath(),
            ZK_MAIN,
            str(cfg),
        ]
        log = self.log_path.open("ab")
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.workdir,
                start_new_session=True,
            )
        finally:
            log.close()

    def wait_ruok(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Wait for `imok`.

        Raises:
            ZkStartError: no `imok` within `timeout_s`, or the JVM exited; has the log tail.
        """
        ok = _wait(
            lambda: four_letter("127.0.0.1", self.client_port, "ruok") == "imok",
            timeout_s,
            self.alive,
        )
        if not ok:
            self.raise_start_error(f"no 'imok' from ruok within {timeout_s:.0f}s")

    def raise_start_error(self, why: str) -> None:
        """Raise `ZkStartError` naming the server, why, and the tail of its log."""
        state = "running" if self.alive() else f"exited with {self.proc and self.proc.poll()}"
        raise ZkStartError(
            f"ZooKeeper sid={self.sid} on 127.0.0.1:{self.client_port} ({state}): {why}\n"
            f"--- {self.log_path} (tail) ---\n{log_tail(self.log_path)}"
        )

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Signal the process group, wait for it, escalate to SIGKILL after a bound."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            if sig != signal.SIGKILL:
                try:
                    os.killpg(proc.pid, signal.SIGCONT)  # a paused JVM cannot handle SIGTERM
                except ProcessLookupError:
                    pass
            stop_group(proc, STOP_TIMEOUT_S, sig)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL the server (a crash, for fault tests)."""
        self.resume()
        self.stop(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP the server's process group: frozen, as in a long GC pause or a hung VM."""
        if self.alive() and self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT a paused server (harmless on a running one)."""
        if self.alive() and self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGCONT)


_BASE_CFG = """\
tickTime=500
initLimit=20
syncLimit=10
dataDir=@DATADIR@
clientPortAddress=127.0.0.1
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
autopurge.purgeInterval=0
"""

# The ensemble's cap on a session's timeout. ZooKeeper's default is 20 ticks, 10 s at tickTime
# 500: a `--zk-timeout 30` was cut to 10 s, which left a client that found its member frozen
# (detected at 2/3 of the timeout) ~3 s to reach another before its session expired, and one CI
# run lost the failover test to that. The same figure is in docker-compose.test.yml (zk1..zk3).
ENSEMBLE_SESSION_CAP = "maxSessionTimeout=60000\n"


class ZkServer:
    """A standalone ZooKeeper server process on a free loopback port.

    Attributes:
        connect: `127.0.0.1:PORT`.
        port: the client port.
        workdir: temp directory with zoo.cfg, data and log (kept when `keep_logs` at stop).
    """

    backend = "process"

    def __init__(self, workdir: Path | None = None, heap: str = "512m",
                 max_session_timeout_ms: int | None = None) -> None:
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="zk2kraft-zk-"))
        (port,) = free_ports(1)
        self.port = port
        self.connect = f"127.0.0.1:{port}"
        cfg = _BASE_CFG + f"clientPort={port}\n"
        if max_session_timeout_ms is not None:
            # ZooKeeper caps a session at 20 ticks (10 s at tickTime 500) unless told otherwise
            cfg += f"maxSessionTimeout={max_session_timeout_ms}\n"
        self.node = ZkProcess(sid=0, client_port=port, workdir=self.workdir, config=cfg, heap=heap)

    def start(self, timeout_s: float = START_TIMEOUT_S) -> ZkServer:
        """Start and wait for `imok`.

        Raises:
            ZkStartError: the server did not come up; the message has the log tail.
        """
        self.node.spawn()
        try:
            self.node.wait_ruok(timeout_s)
            # `imok` comes as soon as the socket listens; `srvr` names a mode only once the
            # server actually serves requests (sessions opened earlier are dropped).
            if not _wait(lambda: self.mode() == "standalone", timeout_s, self.node.alive):
                self.node.raise_start_error(f"not serving within {timeout_s:.0f}s")
        except ZkStartError:
            self.node.stop()
            raise
        return self

    def start_or_fail(self) -> ZkServer:
        """`start` for a fixture: a server that does not come up fails the test (its directory
        kept for the log) instead of erroring with a traceback."""
        try:
            return self.start()
        except ZkStartError as exc:
            self.stop(keep_logs=True)
            pytest.fail(f"ZooKeeper could not start: {exc}", pytrace=False)

    def ruok(self) -> str:
        """The server's answer to `ruok`."""
        return four_letter("127.0.0.1", self.port, "ruok")

    def mode(self) -> str:
        """"standalone" once the server serves requests, "" before."""
        return _server_mode("127.0.0.1", self.port)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """Last lines of the server log."""
        return log_tail(self.node.log_path, lines)

    def stop(self, keep_logs: bool = False) -> None:
        """Stop the server; delete its directory unless `keep_logs`."""
        self.node.stop()
        if not keep_logs:
            shutil.rmtree(self.workdir, ignore_errors=True)


class ZkEnsemble:
    """A 3-node (by default) ZooKeeper ensemble of local processes, for fault tests.

    Attributes:
        connect: `127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`.
        nodes: the members, index 0..n-1 (sids 1..n).
    """

    backend = "process"

    def __init__(self, size: int = 3, workdir: Path | None = None, heap: str = "192m") -> None:
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="zk2kraft-zkens-"))
        ports = free_ports(3 * size)
        servers = "".join(
            f"server.{i + 1}=127.0.0.1:{ports[3 * i + 1]}:{ports[3 * i + 2]}\n"
            for i in range(size)
        )
        self.nodes: list[ZkProcess] = []
        for i in range(size):
            cfg = _BASE_CFG + f"clientPort={ports[3 * i]}\n" + ENSEMBLE_SESSION_CAP + servers
            self.nodes.append(
                ZkProcess(
                    sid=i + 1,
                    client_port=ports[3 * i],
                    workdir=self.workdir / f"zk{i + 1}",
                    config=cfg,
                    heap=heap,
                )
            )
        self.connect = ",".join(n.connect for n in self.nodes)

    @property
    def ports(self) -> list[int]:
        """Client ports of the members, by index."""
        return [n.client_port for n in self.nodes]

    def member_connect(self, i: int) -> str:
        """Connect string of member `i` alone."""
        return self.nodes[i].connect

    def mode(self, i: int) -> str:
        """Member `i`'s quorum role from `srvr`: "leader", "follower" or "" (not serving)."""
        return _server_mode("127.0.0.1", self.nodes[i].client_port)

    def serving(self, i: int) -> bool:
        """True when member `i` serves as leader or follower of a quorum."""
        return self.mode(i) in ("leader", "follower")

    def start(self, i: int | None = None, timeout_s: float = START_TIMEOUT_S) -> ZkEnsemble:
        """Start member `i` (or all) and wait until it answers `imok` and serves in a quorum.

        Raises:
            ZkStartError: a member did not come up or join a quorum; has its log tail.
        """
        members = range(len(self.nodes)) if i is None else [i]
        for m in members:
            self.nodes[m].resume()
            self.nodes[m].workdir.mkdir(parents=True, exist_ok=True)
            self.nodes[m].spawn()
        for m in members:
            node = self.nodes[m]
            node.wait_ruok(timeout_s)
            if not _wait(functools.partial(self.serving, m), timeout_s, node.alive):
                node.raise_start_error(f"not serving in a quorum within {timeout_s:.0f}s")
        return self

    def stop(self, i: int | None = None) -> None:
        """Stop member `i` cleanly (SIGTERM), or every member."""
        for m in range(len(self.nodes)) if i is None else [i]:
            self.nodes[m].stop()

    def kill(self, i: int) -> None:
        """SIGKILL member `i` (a crash)."""
        self.nodes[i].kill()

    def pause(self, i: int) -> None:
        """Freeze member `i` (SIGSTOP): its sockets stay open but nothing answers."""
        self.nodes[i].pause()

    def unpause(self, i: int) -> None:
        """Let a frozen member `i` run again (SIGCONT)."""
        self.nodes[i].resume()

    def restart(self, i: int, timeout_s: float = START_TIMEOUT_S) -> None:
        """Stop member `i` cleanly and start it again (waits until it serves in a quorum)."""
        self.nodes[i].stop()
        self.start(i, timeout_s)

    def log_tail(self, i: int, lines: int = LOG_TAIL_LINES) -> str:
        """Last lines of member `i`'s log."""
        return log_tail(self.nodes[i].log_path, lines)

    def close(self, keep_logs: bool = False) -> None:
        """Stop every member; delete the directory unless `keep_logs`."""
        self.stop()
        if not keep_logs:
            shutil.rmtree(self.workdir, ignore_errors=True)


# --- backend choice ------------------------------------------------------------------------------


def zk_backend(env: dict[str, str] | None = None, probe: Callable[[], bool] | None = None) -> str:
    """Choose how the fixtures run ZooKeeper: "docker" where an engine answers, else "process".

    `ZK2KRAFT_ZK_BACKEND=process|docker` overrides the probe (a forced "docker" that cannot run
    then fails the tests with the reason). The probe is `tests.support.containers.docker_problem`
    (imported lazily: the process backend needs nothing of Docker).

    Raises:
        ValueError: the override names an unknown backend.
    """
    env = dict(os.environ) if env is None else env
    forced = env.get("ZK2KRAFT_ZK_BACKEND", "").strip().lower()
    if forced:
        if forced not in ("process", "docker"):
            raise ValueError(f"ZK2KRAFT_ZK_BACKEND={forced!r}: expected 'process' or 'docker'")
        return forced
    if probe is None:
        from tests.support.containers import docker_problem

        def probe() -> bool:
            return docker_problem() is None

    return "docker" if probe() else "process"


# --- session faults ----------------------------------------------------------------------------


def expire_session(client: KazooClient, connect: str, timeout_s: float = 10.0) -> None:
    """Expire `client`'s ZooKeeper session for real, the way kazoo's own test harness does.

    A second client attaches to the same session id and password and closes it; the server then
    expires the session, deleting its ephemerals, and `client` sees SessionExpired. The second
    client connects without the chroot: with one, kazoo's `start` reads "/" after connecting,
    and `client`, whose connection the server has just closed, can reconnect in between and take
    the session back, losing that read (a busy CI run of 2026-11-29: ConnectionLoss).
    """
    session_id, password = client.client_id
    hosts = connect.split("/", 1)[0]  # the session is the server's, not the chroot's
    other = KazooClient(hosts=hosts, client_id=(session_id, password), timeout=timeout_s)
    other.start(timeout=timeout_s)
    other.stop()
    other.close()


def drop_connection(client: KazooClient, timeout_s: float = 15.0) -> bool:
    """Drop `client`'s TCP connection (the session survives) and wait until it reconnects.

    Uses kazoo's own connection-drop request, as kazoo's test harness does. Server-side watches
    of the old connection are gone afterwards unless the client re-arms them.

    Returns:
        True once the client is CONNECTED again, False if it did not reconnect in time.
    """
    back = threading.Event()

    def listener(state: KazooState) -> bool:
        if state == KazooState.CONNECTED:
            back.set()
            return True  # kazoo removes a listener that returns True
        return False

    client.add_listener(listener)
    client._call(_CONNECTION_DROP, client.handler.async_result())
    ok = back.wait(timeout_s)
    if not ok:
        client.remove_listener(listener)
    return ok


def tree_state(client: KazooClient, path: str = "/") -> dict[str, tuple[int, int, int, int]]:
    """Every znode under the chroot with (mzxid, pzxid, version, cversion)."""
    out: dict[str, tuple[int, int, int, int]] = {}
    data, st = client.get(path)
    out[path] = (st.mzxid, st.pzxid, st.version, st.cversion)
    for child in client.get_children(path):
        out.update(tree_state(client, path.rstrip("/") + "/" + child))
    return out
