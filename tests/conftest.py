"""Shared pytest fixtures: real ZooKeeper (single node and 3-node ensemble), clients, chroots.

Which ZooKeeper: `tests.support.zk.zk_backend()` — containers from docker-compose.test.yml through
pytest-docker where an engine answers and the images are built (scripts/install.sh does both),
Debian's ZooKeeper as local processes where not; `ZK2KRAFT_ZK_BACKEND=process|docker` forces one.
The choice and its reason are printed in pytest's header, and the count of tests run per backend
in its summary. If ZooKeeper cannot start — or the docker backend was chosen and cannot run — the
fixture fails the test with the reason and the server's log tail (never a skip). Process logs are
kept (and their tail printed) when any test failed; container logs are in the failure message.

Fixtures:
    zk_server         session: one real server; `.connect` ("127.0.0.1:PORT"), `.port`.
    zk_ensemble       3 members; `.connect`, `.member_connect(i)`, `.mode(i)`, and faults
                      `.stop(i)`, `.start(i)`, `.kill(i)`, `.pause(i)`, `.unpause(i)`,
                      `.restart(i)` (signals on processes, `docker ...` on containers); every
                      member is brought back up after each test that used it.
    compose_project   docker backend only: the session's Compose project (`.up`, `.pause`, ...).
    zk_client         a started KazooClient on `zk_server` (root), closed after the test.
    zk_chroot         a fresh, already created chroot path "/t_<hex>" on `zk_server`.
    zk_chroot_client  a started KazooClient whose chroot is `zk_chroot`.
    sample_cluster    factory: `sample_cluster(spec)` generates a sample Kafka tree in a fresh
                      chroot and returns (connect, manifest); its session stays open (ephemeral
                      brokers alive) until the test ends.
    zk_session_at     factory: `zk_session_at(connect)` opens a zk2kraft `ZkSession` (10 s
                      timeout) on a connect string; every session is closed after the test.
    immutable         `tests.support.immutable.Immutable`: `.freeze(paths)` (chattr +i),
                      `.release()`; whatever is still frozen is released after the test.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from kazoo.client import KazooClient

from tests.support.cds import ENABLE_ENV as CDS_ENV
from tests.support.containers import (
    COMPOSE_FILE,
    ComposeProject,
    DockerZkEnsemble,
    DockerZkServer,
    compose_command,
    compose_ports,
    docker_problem,
)
from tests.support.immutable import Immutable
from tests.support.kafka import SERVER_JVM_FLAGS_ENV
from tests.support.zk import (
    ZkEnsemble,
    ZkServer,
    ZkStartError,
    zk_backend,
)

if TYPE_CHECKING:
    from zkreader import ZkSession

ROOT = Path(__file__).resolve().parent.parent
CLIENT_TIMEOUT_S = 15.0

# The suite's Kafka servers run on the JIT's C1 tier only (why, and what it saves: the
# constant's comment in tests/support/kafka.py); a value already in the environment wins.
os.environ.setdefault(SERVER_JVM_FLAGS_ENV, "-XX:TieredStopAtLevel=1")
# ... and map a class-data sharing archive of the 3.9.1 jars (tests/support/cds.py: less CPU
# per JVM start); ZK2KRAFT_TEST_CDS=0 in the environment turns it off.
os.environ.setdefault(CDS_ENV, "1")

_backend_cache: dict[str, str] = {}


def _backend() -> str:
    if "b" not in _backend_cache:
        _backend_cache["b"] = zk_backend()
    return _backend_cache["b"]


def pytest_report_header(config: pytest.Config) -> str:
    """Say which ZooKeeper the run uses, so a log shows it was real and how it was started."""
    b = _backend()
    how = "docker-compose.test.yml via pytest-docker" if b == "docker" else (
        "Debian ZooKeeper 3.8 as local processes"
    )
    why = (
        "forced by ZK2KRAFT_ZK_BACKEND"
        if os.environ.get("ZK2KRAFT_ZK_BACKEND")
        else "a Docker engine answered and the images are built"
        if b == "docker"
        else f"container backend unavailable: {docker_problem()}"
    )
    return f"zookeeper backend: {b} ({how}; {why})"


# --- which tests ran on which backend ------------------------------------------------------------

# A test "uses ZooKeeper" when it asks for one of these fixtures (directly or through another).
_ZK_FIXTURES = frozenset({"zk_server", "_zk_ensemble_session", "compose_project"})
_ran: dict[str, int] = {}
# Taken out of the environment so that a pytest run started by a test (the harness checks how a
# broken backend fails) does not add its counts to this run's.
_COUNTS_FILE = os.environ.pop("ZK2KRAFT_BACKEND_COUNTS", "")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `docker` exercise the engine itself: deselected (and counted as such in the
    summary) on the process backend, i.e. on a machine whose engine cannot run containers."""
    if _backend() == "docker":
        return
    keep = [it for it in items if it.get_closest_marker("docker") is None]
    dropped = [it for it in items if it.get_closest_marker("docker") is not None]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
        _ran["docker-only, deselected on the process backend"] = len(dropped)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each test once (its call, or its setup when that failed) under its backend."""
    if report.when == "call" or (report.when == "setup" and not report.passed):
        names = set(getattr(report, "_zk_fixtures", ()))
        key = f"zookeeper {_backend()}" if names else "no zookeeper"
        _ran[key] = _ran.get(key, 0) + 1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    report._zk_fixtures = sorted(_ZK_FIXTURES & set(getattr(item, "fixturenames", ())))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """One line per backend, e.g. `tests per zookeeper backend: zookeeper docker=120 ...`;
    scripts/test.sh adds the lines of its runs up (ZK2KRAFT_BACKEND_COUNTS names a file)."""
    line = " ".join(f"{k.replace(' ', '_')}={v}" for k, v in sorted(_ran.items()))
    terminalreporter.write_line(f"tests per zookeeper backend: {line or 'none ran'}")
    if _COUNTS_FILE:
        with open(_COUNTS_FILE, "a", encoding="utf-8") as f:
            f.write(line + "\n")


# --- the container backend (pytest-docker) -------------------------------------------------------
# pytest-docker's fixtures, pointed at our compose file and Debian's Compose. Nothing is started
# at session set-up: each fixture `up`s the services it needs; the project is removed at the end.


@pytest.fixture(scope="session")
def docker_compose_file() -> str:
    return str(COMPOSE_FILE)


@pytest.fixture(scope="session")
def docker_compose_command() -> str:
    return compose_command()


@pytest.fixture(scope="session")
def docker_compose_project_name() -> str:
    return f"zk2kraft{os.getpid()}"


@pytest.fixture(scope="session")
def compose_ports_env() -> Iterator[dict[str, str]]:
    """Free loopback ports for every service, exported for Compose's variable substitution.

    The container backend was asked for (forced, or chosen because an engine answered): if it
    cannot run, every test that needs it FAILS here with the reason — never a skip.
    """
    problem = docker_problem()
    if problem:
        pytest.fail(f"ZooKeeper (docker backend) cannot run: {problem}", pytrace=False)
    ports = compose_ports()
    saved = {k: os.environ.get(k) for k in ports}
    os.environ.update(ports)
    yield ports
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="session")
def docker_setup(compose_ports_env: dict[str, str]) -> list[str]:
    return []  # services are started on demand (ComposeProject.up)


@pytest.fixture(scope="session")
def docker_cleanup() -> list[str]:
    return ["down -v -t 5"]


@pytest.fixture(scope="session")
def compose_project(docker_services: Any) -> ComposeProject:
    """The session's docker-compose.test.yml project, run through pytest-docker."""
    return ComposeProject(docker_services)


def _report_logs(request: pytest.FixtureRequest, what: str, tail: str, where: Path | None) -> bool:
    """Print a server's log tail when the session had failures; return whether to keep logs."""
    failed = request.session.testsfailed > 0
    if failed:
        sys.stderr.write(f"\n--- {what}: log tail (kept in {where}) ---\n{tail}\n")
    return failed


@pytest.fixture(scope="session")
def zk_server(request: pytest.FixtureRequest) -> Iterator[ZkServer | DockerZkServer]:
    """One real ZooKeeper server for the whole session."""
    if _backend() == "docker":
        project = request.getfixturevalue("compose_project")
        ports = request.getfixturevalue("compose_ports_env")
        try:
            yield DockerZkServer(project, int(ports["ZK_PORT"])).start()
        except ZkStartError as exc:
            pytest.fail(f"ZooKeeper (docker) could not start: {exc}", pytrace=False)
        return
    server = ZkServer().start_or_fail()
    yield server
    keep = _report_logs(request, "zk_server", server.log_tail(), server.workdir)
    server.stop(keep_logs=keep)


@pytest.fixture(scope="session")
def _zk_ensemble_session(request: pytest.FixtureRequest) -> Iterator[ZkEnsemble | DockerZkEnsemble]:
    if _backend() == "docker":
        project = request.getfixturevalue("compose_project")
        env = request.getfixturevalue("compose_ports_env")
        ports = [int(env[f"ZK{i}_PORT"]) for i in (1, 2, 3)]
        try:
            yield DockerZkEnsemble(project, ports).start()
        except ZkStartError as exc:
            pytest.fail(f"ZooKeeper ensemble (docker) could not start: {exc}", pytrace=False)
        return
    ens = ZkEnsemble(3)
    try:
        ens.start()
    except ZkStartError as exc:
        ens.close(keep_logs=True)
        pytest.fail(f"ZooKeeper ensemble could not start: {exc}", pytrace=False)
    yield ens
    keep = _report_logs(
        request, "zk_ensemble", "\n".join(ens.log_tail(i) for i in range(3)), ens.workdir
    )
    ens.close(keep_logs=keep)


@pytest.fixture
def zk_ensemble(
    _zk_ensemble_session: ZkEnsemble | DockerZkEnsemble,
) -> Iterator[ZkEnsemble | DockerZkEnsemble]:
    """The 3-node ensemble; members a test stopped or killed are restarted afterwards."""
    ens = _zk_ensemble_session
    yield ens
    try:
        if not all(ens.serving(i) for i in range(3)):
            ens.start()  # all at once: one member alone cannot form a quorum
    except ZkStartError as exc:
        pytest.fail(f"ZooKeeper ensemble member did not come back: {exc}", pytrace=False)


def _started_client(hosts: str) -> KazooClient:
    client = KazooClient(hosts=hosts, timeout=CLIENT_TIMEOUT_S)
    try:
        client.start(timeout=CLIENT_TIMEOUT_S)
    except Exception as exc:  # kazoo raises its own timeout types
        client.close()
        pytest.fail(f"cannot connect to ZooKeeper at {hosts}: {exc!r}", pytrace=False)
    return client


def _close(client: KazooClient) -> None:
    client.stop()
    client.close()


@pytest.fixture(scope="session")
def _zk_admin(zk_server: ZkServer | DockerZkServer) -> Iterator[KazooClient]:
    client = _started_client(zk_server.connect)
    yield client
    _close(client)


@pytest.fixture
def zk_client(zk_server: ZkServer | DockerZkServer) -> Iterator[KazooClient]:
    """A started KazooClient on the session server's root, closed after the test."""
    client = _started_client(zk_server.connect)
    yield client
    _close(client)


def _new_chroot(admin: KazooClient) -> str:
    path = f"/t_{uuid.uuid4().hex[:12]}"
    admin.create(path)
    return path


@pytest.fixture
def zk_chroot(_zk_admin: KazooClient) -> str:
    """A fresh chroot path like "/t_<hex>", already created on `zk_server`."""
    return _new_chroot(_zk_admin)


@pytest.fixture
def zk_chroot_client(zk_server: ZkServer | DockerZkServer, zk_chroot: str) -> Iterator[KazooClient]:
    """A started KazooClient whose chroot is `zk_chroot`."""
    client = _started_client(f"{zk_server.connect}{zk_chroot}")
    yield client
    _close(client)


@dataclass(frozen=True)
class SampleCluster:
    """A generated sample Kafka tree: where it is and what it holds.

    Attributes:
        connect: Kafka-style connect string including the chroot.
        chroot: the chroot path.
        manifest: the generator's `SampleManifest`.
        client: the generating session (keep it open: it owns the ephemeral broker znodes).
    """

    connect: str
    chroot: str
    manifest: Any
    client: KazooClient


@pytest.fixture
def sample_cluster(
    zk_server: ZkServer | DockerZkServer, _zk_admin: KazooClient
) -> Iterator[Callable[..., SampleCluster]]:
    """Factory: `sample_cluster(spec=None)` writes a sample tree into a fresh chroot.

    `spec` defaults to `SampleSpec.clean()`. The generating sessions stay open until the test
    ends, so the ephemeral `/brokers/ids/*` and `/controller` znodes stay alive.
    """
    from samples import SampleSpec, generate_sample_cluster

    clients: list[KazooClient] = []

    def make(spec: Any = None) -> SampleCluster:
        chroot = _new_chroot(_zk_admin)
        connect = f"{zk_server.connect}{chroot}"
        client = _started_client(connect)
        clients.append(client)
        manifest = generate_sample_cluster(client, spec or SampleSpec.clean())
        return SampleCluster(connect=connect, chroot=chroot, manifest=manifest, client=client)

    yield make
    for c in clients:
        _close(c)


@pytest.fixture
def zk_session_at(
    zk_server: ZkServer | DockerZkServer,
) -> Iterator[Callable[[str], ZkSession]]:
    """Factory: open a zk2kraft session on a connect string (with its chroot); closed after."""
    from zkreader import ConnectOptions, open_session

    opened: list[ZkSession] = []

    def make(connect: str) -> ZkSession:
        s = open_session(ConnectOptions(connect, timeout_s=10))
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def immutable() -> Iterator[Immutable]:
    """Paths made immutable during the test; released afterwards (tmp_path must stay removable)."""
    held = Immutable()
    yield held
    held.release()
