"""ZooKeeper faults in the middle of the read, through the CLI as an operator runs it.

`zk2kraft migrate --cutover none` and `zk2kraft snapshot` read a generated 20,000-partition tree;
the reader holds after 5,000 znodes (the test-only hook ZK2KRAFT_TEST_PAUSE_READ, see
writers/_faults.py), the fault is injected, the gate opens and the rest of the read meets
the fault. Every case ends one of two ways, asserted per case:

- the read rides out the fault (the session survives: a quick restart, a short pause, a lost
  ensemble member): exit 0, and `zk2kraft verify` finds parity afterwards;
- it cannot (the server stays down or frozen past --zk-timeout, or the session expired): a clean
  exit 3 naming the problem, and nothing written (no voter dir, no staging dir, no --out file).

Single-server faults use a server of their own (killing the session-wide one would break other
tests); ensemble faults use the `zk_ensemble` fixture, which restarts what a test stopped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError

from samples import SampleSpec, generate_sample_cluster
from tests.support.zk import (
    ZkEnsemble,
    ZkServer,
    client_in_new_chroot,
    four_letter,
    wait_until,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ZK2KRAFT = [sys.executable, "-m", "migrate.cli"]
VOTERS = (3000, 3001, 3002)
PAUSE_AFTER = 5_000  # znodes read before the fault; the tree has ~20,000 more to read
SPEC = SampleSpec.clean(topics=200, partitions_per_topic=100, brokers=3)
GATE_TIMEOUT_S = 120.0
# what exit 3 says: the read names the znode it could not get (the tree's partition states are
# what is left to read after the gate)
NO_REPLY = "no reply from ZooKeeper reading /brokers/topics/"
EXPIRED = "ZooKeeper session expired reading /brokers/topics/"


@dataclass
class Tree:
    """A generated tree in its own chroot; `client` keeps the ephemeral brokers alive."""

    connect: str
    client: KazooClient


def _generate_once(connect: str, spec: SampleSpec) -> Tree:
    chrooted, client = client_in_new_chroot(connect, "f", start_timeout_s=60)
    try:
        generate_sample_cluster(client, spec)
    except BaseException:
        client.stop()
        client.close()
        raise
    return Tree(chrooted, client)


def _generate(connect: str, spec: SampleSpec = SPEC, attempts: int = 3) -> Tree:
    """The test's tree. Set-up only: on a loaded machine an ensemble still settling after the
    previous test's fault can drop the generator's connection, so a failed attempt is retried
    in a fresh chroot (the fault under test comes later, from the test itself)."""
    for attempt in range(1, attempts + 1):
        try:
            return _generate_once(connect, spec)
        except (ConnectionLoss, SessionExpiredError, KazooTimeoutError):
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")


def _ensemble_tree(ensemble: ZkEnsemble) -> Tree:
    """Wait until every member serves (the fixture may have just restarted one), then generate
    the same tree with fewer writes in flight: 64 multi-ops of 250 creates at once made a
    loaded ensemble's followers fall behind and drop the generator's connection."""
    assert wait_until(lambda: all(ensemble.serving(i) for i in range(3)), 120.0), (
        "the ensemble did not serve with all three members")
    return _generate(ensemble.connect, replace(SPEC, window=4, batch_ops=100))


@pytest.fixture
def own_server() -> Iterator[ZkServer]:
    """A standalone server only this test uses (it gets killed and frozen). It grants the
    session timeout each test asks for (--zk-timeout up to 60 s): by default ZooKeeper caps it
    at 20 ticks, 10 s here, and a kill + restart of the server on a loaded machine outlasted
    that, so the session expired where the test means it to survive."""
    server = ZkServer(heap="384m", max_session_timeout_ms=120_000).start_or_fail()
    yield server
    if server.node.proc is not None and server.node.alive():
        os.killpg(server.node.proc.pid, signal.SIGCONT)  # never leave it frozen
    server.stop()


@pytest.fixture
def own_tree(own_server: ZkServer) -> Iterator[Tree]:
    tree = _generate(own_server.connect)
    yield tree
    tree.client.stop()
    tree.client.close()


class Run:
    """One CLI run held at the read gate: inject a fault, then `release()` and `finish()`."""

    def __init__(self, argv: list[str], work: Path) -> None:
        self.gate = work / f"gate-{uuid.uuid4().hex[:6]}"
        env = {**os.environ, "ZK2KRAFT_TEST_PAUSE_READ": f"{PAUSE_AFTER}:{self.gate}",
               "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([*ZK2KRAFT, *argv], cwd=ROOT, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        reached = self.gate.with_name(self.gate.name + ".reached")
        if not wait_until(lambda: reached.exists() or self.proc.poll() is not None,
                          GATE_TIMEOUT_S) or not reached.exists():
            out, err = self.finish()
            pytest.fail(f"the read never reached the gate (exit {self.proc.returncode}): {err}")
        self.info = json.loads(reached.read_text())
        assert self.info["reads"] == PAUSE_AFTER

    def release(self) -> None:
        self.gate.with_name(self.gate.name + ".go").touch()

    def finish(self, timeout_s: float = 300.0) -> tuple[str, str]:
        self.release()
        try:
            out, err = self.proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"zk2kraft did not finish within {timeout_s:.0f}s: {err[-2000:]}")
        return out, err


def _migrate_argv(connect: str, work: Path, *, zk_timeout: float) -> list[str]:
    return ["migrate", "--zookeeper", connect, "--cutover", "none", "--spark-master",
            "in-process", "--quiet", "--zk-timeout", str(zk_timeout),
            *[f"--voter={v}={work / f'c{v}'}" for v in VOTERS]]


def _verify(connect: str, work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ZK2KRAFT, "verify", "--zookeeper", connect, "--quiet", "--json", "-",
         *[f"--voter={v}={work / f'c{v}'}" for v in VOTERS]],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )


def _assert_migrated_with_parity(proc: subprocess.Popen[str], err: str, connect: str,
                                 work: Path) -> None:
    assert proc.returncode == 0, err
    for v in VOTERS:
        assert (work / f"c{v}" / "__cluster_metadata-0" / "quorum-state").is_file()
    verified = _verify(connect, work)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    doc = json.loads(verified.stdout)
    assert doc["parity"] is True and doc["differences"] == []
    assert doc["checked"]["partition"] == SPEC.topics * SPEC.partitions_per_topic


def _assert_exit_3_nothing_written(proc: subprocess.Popen[str], err: str, work: Path,
                                   *phrases: str) -> None:
    assert proc.returncode == 3, err
    message = err.strip().splitlines()[-1]
    assert message.startswith("zk2kraft ") and "error:" in message, err
    assert any(p in message for p in phrases), message
    # neither `migrate --cutover none` nor `snapshot` arms a watch: the message must not talk
    # of lost watches (only the online mirror holds them, and it says so in its own line)
    assert "watch" not in message.lower(), message
    assert "Traceback" not in err
    written = sorted(p.name for p in work.iterdir() if not p.name.startswith("gate-"))
    assert written == [], written  # no voter dir, no staging dir, no report


def _freeze(pid: int) -> None:
    os.killpg(pid, signal.SIGSTOP)


def _thaw(pid: int) -> None:
    os.killpg(pid, signal.SIGCONT)


# ----------------------------------------------------------------------------- one server


def test_server_killed_mid_read_and_not_back_exits_3_writing_nothing(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path
) -> None:
    run = Run(_migrate_argv(own_tree.connect, tmp_path, zk_timeout=5), tmp_path)
    own_server.node.kill()
    _, err = run.finish()
    _assert_exit_3_nothing_written(run.proc, err, tmp_path, NO_REPLY)


def test_server_killed_mid_read_and_restarted_within_the_timeout_migrates_with_parity(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path
) -> None:
    # the session is in ZooKeeper's transaction log: a restarted server takes it back
    run = Run(_migrate_argv(own_tree.connect, tmp_path, zk_timeout=60), tmp_path)
    own_server.node.kill()
    run.release()  # the read meets a dead server, and retries
    own_server.start()
    _, err = run.finish()
    _assert_migrated_with_parity(run.proc, err, own_tree.connect, tmp_path)


def test_server_paused_briefly_mid_read_migrates_with_parity(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path
) -> None:
    run = Run(_migrate_argv(own_tree.connect, tmp_path, zk_timeout=30), tmp_path)
    assert own_server.node.proc is not None
    pid = own_server.node.proc.pid
    _freeze(pid)
    run.release()
    time.sleep(2.0)  # well inside the session timeout: the session survives
    _thaw(pid)
    _, err = run.finish()
    _assert_migrated_with_parity(run.proc, err, own_tree.connect, tmp_path)


def test_server_paused_past_the_timeout_exits_3_writing_nothing(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path
) -> None:
    run = Run(_migrate_argv(own_tree.connect, tmp_path, zk_timeout=4), tmp_path)
    assert own_server.node.proc is not None
    pid = own_server.node.proc.pid
    _freeze(pid)
    try:
        _, err = run.finish()  # the server stays frozen until the tool has given up
    finally:
        _thaw(pid)
    _assert_exit_3_nothing_written(run.proc, err, tmp_path, NO_REPLY)


def test_session_expired_mid_read_exits_3_writing_nothing(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path
) -> None:
    # A real expiry: the tool itself is frozen past its 4 s session timeout, so the server
    # expires the session (watches and all); thawed, the client learns it on reconnect.
    run = Run(_migrate_argv(own_tree.connect, tmp_path, zk_timeout=4), tmp_path)
    session = run.info["session_id"]
    os.kill(run.proc.pid, signal.SIGSTOP)
    try:
        gone = wait_until(
            lambda: session not in four_letter("127.0.0.1", own_server.port, "cons"), 30.0)
    finally:
        os.kill(run.proc.pid, signal.SIGCONT)
    assert gone, f"ZooKeeper did not expire session {session}"
    _, err = run.finish()
    _assert_exit_3_nothing_written(run.proc, err, tmp_path, EXPIRED)
    # what happens is said whole: the session expired at this znode, and the remedy
    assert err.strip().splitlines()[-1].endswith("; re-run"), err


@pytest.mark.parametrize("fault", ["killed", "session-expired"])
def test_snapshot_mid_read_fault_exits_3_and_writes_no_file(
    own_server: ZkServer, own_tree: Tree, tmp_path: Path, fault: str
) -> None:
    out = tmp_path / "tree.jsonl"
    run = Run(["snapshot", "--zookeeper", own_tree.connect, "--quiet", "--zk-timeout", "4",
               "--out", str(out)], tmp_path)
    if fault == "killed":
        own_server.node.kill()
        phrase = NO_REPLY
    else:
        session = run.info["session_id"]
        os.kill(run.proc.pid, signal.SIGSTOP)
        try:
            assert wait_until(
                lambda: session not in four_letter("127.0.0.1", own_server.port, "cons"), 30.0)
        finally:
            os.kill(run.proc.pid, signal.SIGCONT)
        phrase = EXPIRED
    _, err = run.finish()
    _assert_exit_3_nothing_written(run.proc, err, tmp_path, phrase)
    assert not out.exists()


def test_snapshot_rides_out_a_brief_pause(own_server: ZkServer, own_tree: Tree,
                                          tmp_path: Path) -> None:
    out = tmp_path / "tree.jsonl"
    run = Run(["snapshot", "--zookeeper", own_tree.connect, "--quiet", "--zk-timeout", "30",
               "--out", str(out)], tmp_path)
    assert own_server.node.proc is not None
    _freeze(own_server.node.proc.pid)
    run.release()
    time.sleep(2.0)
    _thaw(own_server.node.proc.pid)
    _, err = run.finish()
    assert run.proc.returncode == 0, err
    kinds: dict[str, int] = {}
    with out.open() as f:
        for line in f:
            kind = json.loads(line)["kind"]
            kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds["partition_state"] == SPEC.topics * SPEC.partitions_per_topic
    assert kinds["topic"] == SPEC.topics and kinds["broker"] == SPEC.brokers


# ----------------------------------------------------------------------------- ensemble


def _member_serving(ensemble: ZkEnsemble, session: str) -> int:
    """Which member holds the tool's connection (its `cons` lists the session id)."""
    for i, port in enumerate(ensemble.ports):
        if session in four_letter("127.0.0.1", port, "cons"):
            return i
    raise AssertionError(f"no ensemble member lists session {session}")


@pytest.mark.parametrize("how", ["killed", "stopped", "frozen"])
def test_ensemble_loses_the_member_the_tool_reads_from_and_it_fails_over_with_parity(
    zk_ensemble: ZkEnsemble, tmp_path: Path, how: str
) -> None:
    tree = _ensemble_tree(zk_ensemble)
    try:
        run = Run(_migrate_argv(tree.connect, tmp_path, zk_timeout=30), tmp_path)
        member = _member_serving(zk_ensemble, run.info["session_id"])
        if how == "killed":
            zk_ensemble.kill(member)  # `docker kill` on containers, SIGKILL on processes
        elif how == "stopped":
            zk_ensemble.stop(member)
        else:
            zk_ensemble.pause(member)  # `docker pause` / SIGSTOP: silent, its socket still open
        _, err = run.finish()
        # the two others still form a quorum: the session moves to one of them
        assert sum(zk_ensemble.serving(i) for i in range(3)) == 2
        _assert_migrated_with_parity(run.proc, err, tree.connect, tmp_path)
    finally:
        tree.client.stop()
        tree.client.close()


def test_ensemble_losing_its_quorum_mid_read_exits_3_writing_nothing(
    zk_ensemble: ZkEnsemble, tmp_path: Path
) -> None:
    tree = _ensemble_tree(zk_ensemble)
    try:
        run = Run(_migrate_argv(tree.connect, tmp_path, zk_timeout=5), tmp_path)
        member = _member_serving(zk_ensemble, run.info["session_id"])
        zk_ensemble.kill(member)
        zk_ensemble.kill((member + 1) % 3)  # one member left: no quorum, nothing serves
        # The survivor keeps answering reads until it notices the lost quorum (up to syncLimit
        # ticks); a read resumed before that can finish (CI saw exit 0). Wait until it stops.
        survivor = (member + 2) % 3
        assert wait_until(lambda: not zk_ensemble.serving(survivor), 60.0), (
            "the last member still serves without a quorum")
        _, err = run.finish()
        _assert_exit_3_nothing_written(run.proc, err, tmp_path, NO_REPLY)
    finally:
        tree.client.stop()
        tree.client.close()

