"""The stand-in killed -9, and `--broker-wait` running out, with real Kafka 3.9.1 brokers in
migration mode and a canary producing and consuming throughout; the tool's advice followed word
for word, then Kafka asked whether the cluster is available (issue 16: "every recovery advice is
a tested path").

One module-scoped cluster: two ZooKeeper-mode brokers in migration mode (`controller.quorum.voters`
= stand-in 3000, controllers 3001 and 3002), topic `load-000` with `PARTITIONS` partitions, RF 2.
Each case formats its own controllers; a case that found the cluster migrated by the one before
hands ZooKeeper back first (`_hand_back`: the printed rollback, then the brokers' own
`__cluster_metadata-0` cleared, as "start over" says).

Available (`tests.support.availability`): every partition has a leader and ISR == replicas, an
acks=all record is produced and consumed, and the test's own canary (`migrate._canary.Canary`
on topic `killed-canary`, running from before the kill to the end) consumed every record it had
acknowledged. No broker logged a `raftManager fault` or stopped.

* `test_killed_after_the_fence_then_a_real_controller_in_the_slot`: killed right after the fence;
  a controller takes over; the re-run exits 1 ("ZooKeeper IS fenced ... Either start a real KRaft
  controller in the stand-in's slot ..., then restart the other controllers one at a time, the
  active one last"); done so, Kafka's own migration claims /controller and reaches DUAL_WRITE.
* `test_killed_before_the_fence_then_start_over`: killed just before the fence; the re-run exits
  1 ("ZooKeeper was not fenced ... or start over with zk2kraft, in this order: (1)..(5)"); done
  so, the last run exits 0 with status ok.
* `test_broker_pointed_elsewhere_broker_wait_runs_out`: broker 1's `controller.quorum.voters`
  points at another quorum; `--broker-wait 15` runs out, the run cuts over with a warning and
  ends with exit 4 (`BROKERS_UNREGISTERED_AT_FENCE`); its advice (controller.quorum.voters naming
  the stand-in's slot, restart) brings broker 1 back under the new controller.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from migrate._canary import Canary, CanaryReport
from tests.support.availability import wait_available
from tests.support.kafka import KafkaController, KafkaZkBroker, free_port, storage_format
from tests.support.migration_cluster import (
    MigrationCluster,
    dual_write_at,
    migration_cluster,
    wait_for_kraft_claim,
)
from tests.support.standin import (
    LONG_ELECTION,
    STANDIN,
    STANDIN_FOLLOWERS,
    migrate_through_standin,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

PARTITIONS = 20
CANARY_TOPIC = "killed-canary"
TOPICS = {"load-000": PARTITIONS, CANARY_TOPIC: 1}  # what must still be there, whole
_CONTROLLER_PROPS = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    # the stand-in must win the first election; a dead one is noticed after the fetch timeout
    "controller.quorum.election.timeout.ms": "60000",
    "controller.quorum.fetch.timeout.ms": "10000",  # 5000 lost a live stand-in at load 60
}


@dataclass
class Rig:
    """The shared cluster, and whether the last case left it migrated."""

    root: Path
    connect: str
    zk: KazooClient
    cluster: MigrationCluster
    ports: dict[int, int]
    voters: str
    cluster_id: str
    cases: int = 0
    left_migrated: Path | None = None  # the case dir whose stand-in/journal a rollback names
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap

    def canary_args(self, wait: int = 60) -> tuple[str, ...]:
        return ("--bootstrap-server", self.bootstrap, "--broker-wait", str(wait))


@pytest.fixture(scope="module")
def rig(zk_server: Any, _zk_admin: KazooClient,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    chroot = f"/t_{uuid.uuid4().hex[:12]}"
    _zk_admin.create(chroot)
    connect = f"{zk_server.connect}{chroot}"
    zk = KazooClient(hosts=connect, timeout=30)
    zk.start(timeout=30)
    root = tmp_path_factory.mktemp("killed")
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    started = time.monotonic()
    try:
        with migration_cluster(root, connect, brokers=2, heap="320m", voters=voters) as cluster:
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
            for f in admin.create_topics([NewTopic("load-000", num_partitions=PARTITIONS,
                                                   replication_factor=2)],
                                         request_timeout=180).values():
                f.result(240)
            cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
            r = Rig(root, connect, zk, cluster, ports, voters, cluster_id)
            r.timings["cluster up"] = time.monotonic() - started
            yield r
            print("\nkilled-with-brokers timings (s): "
                  + ", ".join(f"{k} {v:.0f}" for k, v in r.timings.items()))
    finally:
        zk.stop()
        zk.close()


def _case(rig: Rig, name: str) -> Path:
    """A fresh directory for one case; the cluster handed back to ZooKeeper first if the last
    case left it migrated."""
    if rig.left_migrated is not None:
        started = time.monotonic()
        _hand_back(rig, rig.left_migrated)
        rig.timings[f"hand back before {name}"] = time.monotonic() - started
    rig.cases += 1
    case = rig.root / f"case{rig.cases}-{name}"
    case.mkdir()
    return case


def _hand_back(rig: Rig, case: Path, point_broker_1_at: str | None = None) -> None:
    """The printed way back (`zk2kraft rollback`, controllers stopped: they are, the case's
    context ended), then each broker restarted without its `__cluster_metadata-0` (the quorum
    the next case formats starts its epochs again; "start over" step 4)."""
    back = subprocess.run([sys.executable, "-m", "migrate.cli", "rollback", "--zookeeper",
                           rig.connect, "--voter", f"{STANDIN}={case / 'standin'}",
                           "--journal", str(case / "journal")],
                          capture_output=True, text=True, timeout=120)
    assert back.returncode == 0, back.stdout + back.stderr
    for broker in rig.cluster.brokers:
        update = ({"controller.quorum.voters": point_broker_1_at}
                  if point_broker_1_at is not None and broker.broker_id == 1 else None)
        restart_without_metadata_log(broker, rig.zk, rig.bootstrap, update=update)
    rig.left_migrated = None


def restart_without_metadata_log(broker: KafkaZkBroker, zk: KazooClient, bootstrap: str, *,
                                 update: dict[str, str] | None = None) -> None:
    """Stopped, its `__cluster_metadata-0` deleted (its only log.dir holds it), started with
    `update`d properties, and every partition whole again (Metadata) before the caller goes on."""
    broker.stop()
    shutil.rmtree(Path(broker.properties["log.dirs"]) / "__cluster_metadata-0",
                  ignore_errors=True)
    registration = f"/brokers/ids/{broker.broker_id}"
    broker.restart(update=update, ready_to_start=lambda: zk.exists(registration) is None)
    wait_available(bootstrap, "load-000", {"load-000": PARTITIONS}, 240)


def _canary(rig: Rig) -> Canary:
    canary = Canary(rig.bootstrap, topic=CANARY_TOPIC)
    canary.start(120)
    canary.warm_up(120)
    return canary


def _assert_nothing_lost(report: CanaryReport) -> None:
    assert report.acked > 100 and (report.missing, report.duplicates) == (0, 0), (
        report.acked, report.missing, report.duplicates, report.produce_errors)


def _assert_brokers_fine(brokers: list[KafkaZkBroker]) -> None:
    for broker in brokers:
        broker.assert_running()
        assert "raftManager fault" not in broker.all_logs_text(), broker.broker_id


def _restart(broker: KafkaZkBroker, rig: Rig) -> None:
    """One broker restarted, and every partition whole again before the caller goes on."""
    registration = f"/brokers/ids/{broker.broker_id}"
    broker.restart(ready_to_start=lambda: rig.zk.exists(registration) is None)
    wait_available(rig.bootstrap, "load-000", {"load-000": PARTITIONS}, 240)


def _assert_registered(brokers: list[KafkaZkBroker], leader: KafkaController) -> None:
    """Every broker registered with the KRaft controller in its current run, which no longer
    rejects its heartbeats or its producer-id requests (what the aborted registrations caused:
    STALE_BROKER_EPOCH for every heartbeat, "No broker registration found" for
    AllocateProducerIds, idempotent producers stalled on "Coordinator load in progress")."""
    time.sleep(10)  # a few heartbeats (every 2 s) after the registration
    for broker in brokers:
        text = broker.launched_log_text()
        assert f"Successfully registered broker {broker.broker_id}" in text, text[-3000:]
        last = text.rfind(f"Successfully registered broker {broker.broker_id}")
        assert "received error STALE_BROKER_EPOCH" not in text[last:], text[last:][-3000:]
    recent = leader.launched_log_text()[-20_000:]  # the last seconds of its log
    assert "No broker registration found for broker id" not in recent, recent[-3000:]


def _said(done: Any) -> str:
    return " ".join((done.stdout + done.stderr).split())


def _killed(run: _Running, hook: str) -> None:
    code, said = run.finish()
    assert code == -9, said
    assert f"killing zk2kraft at {hook}" in said


class _Running:
    """`migrate --standin` running, its output read as it comes (the operator watches it)."""

    def __init__(self, rig: Rig, case: Path, *args: str,
                 env: dict[str, str] | None = None) -> None:
        self.proc = migrate_through_standin(rig.connect, rig.ports, case, *args, env=env,
                                            popen=True)
        self.lines: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(pipe,), daemon=True)
                         for pipe in (self.proc.stdout, self.proc.stderr)]
        for t in self._readers:
            t.start()

    def _read(self, pipe: Any) -> None:
        for line in pipe:
            self.lines.append(line)

    def wait_for(self, text: str, timeout_s: float = 240) -> None:
        deadline = time.monotonic() + timeout_s
        while text not in "".join(self.lines):
            assert self.proc.poll() is None or any(t.is_alive() for t in self._readers), \
                "".join(self.lines)
            assert time.monotonic() < deadline, f"no {text!r} within {timeout_s:.0f}s: " + \
                "".join(self.lines)
            time.sleep(0.2)

    def finish(self, timeout_s: float = 600) -> tuple[int, str]:
        try:
            code = self.proc.wait(timeout_s)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(30)
        for t in self._readers:
            t.join(30)
        return code, "".join(self.lines)


@contextlib.contextmanager
def _standin_then_controllers(rig: Rig, case: Path, *args: str,
                              env: dict[str, str] | None = None
                              ) -> Iterator[tuple[_Running, list[KafkaController]]]:
    """The printed step 3: the controllers formatted, zk2kraft started, and once its stand-in
    listens and asks for votes (up to 120 s), the controllers started. Under load (78 on 2 cores)
    both other orders failed: controllers started first, one led itself at epoch 1 before the
    stand-in asked; formatted after zk2kraft started, its 120 s ran out first."""
    nodes = [KafkaController(case / f"node{n}", case / f"meta{n}", node_id=n, heap="320m",
                             quorum=rig.ports, extra=_controller_extra(rig))
             for n in STANDIN_FOLLOWERS]
    for node in nodes:  # formatted first, as step 3 prints it (a JVM each: slow under load)
        storage_format(node.config_path, rig.cluster_id)
    run = _Running(rig, case, *args, env=env)
    try:
        run.wait_for(f"stand-in {STANDIN} listening on")
        for node in nodes:
            node.launch()
        for node in nodes:
            node.wait_started()
        yield run, nodes
    finally:
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait(30)
        for node in nodes:
            node.stop()


def _new_leader(nodes: list[KafkaController]) -> KafkaController:
    """The controller that won an election once the stand-in stopped being heard from."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for node in nodes:
            if "Completed transition to Leader" in node.log_text():
                return node
        time.sleep(0.5)
    raise AssertionError("no controller was elected within 120 s after the kill\n"
                         + "\n".join(n.log_text()[-3000:] for n in nodes))


def _controller_extra(rig: Rig) -> dict[str, str]:
    """What `migration_mode_controllers` gives 3001/3002: "configured like the others"."""
    return {**LONG_ELECTION, "zookeeper.metadata.migration.enable": "true",
            "zookeeper.connect": rig.connect,
            "delegation.token.secret.key": "zk2kraft-oracle-token-secret", **_CONTROLLER_PROPS}


def test_killed_after_the_fence_then_a_real_controller_in_the_slot(rig: Rig) -> None:
    case = _case(rig, "after-fence")
    started = time.monotonic()
    epoch_before = int(rig.zk.get("/controller_epoch")[0])
    canary = _canary(rig)
    try:
        with _standin_then_controllers(rig, case, *rig.canary_args(),
                                       env={"ZK2KRAFT_CRASH_AT": "after_fence"}) as (run, nodes):
            _killed(run, "after_fence")
            rig.left_migrated = case
            leader = _new_leader(nodes)
            rerun = migrate_through_standin(rig.connect, rig.ports, case, *rig.canary_args())
            said = _said(rerun)
            assert rerun.returncode == 1, said
            doc = json.loads((case / "m.json").read_text())
            assert (doc["status"], doc["error"]["exit_code"]) == ("failed", 1), doc
            assert (f"controller {leader.node_id} leads the KRaft quorum" in said), said
            assert (f"ZooKeeper IS fenced (/controller claimed by {STANDIN} with "
                    f"kraftControllerEpoch 1, /controller_epoch {epoch_before + 1})") in said, said
            slot = (f"Either start a real KRaft controller in the stand-in's slot: node.id="
                    f"{STANDIN}, its controller listener at 127.0.0.1:{rig.ports[STANDIN]}")
            assert slot in said, said
            assert (f"then restart the other controllers one at a time, the active one "
                    f"({leader.node_id}) last") in said, said
            # the advice, word for word: a real controller in slot 3000, formatted with the
            # cluster's id, configured like the others ...
            real = KafkaController(case / "node3000", case / "meta3000", node_id=STANDIN,
                                   quorum=rig.ports, heap="320m", extra=_controller_extra(rig))
            storage_format(real.config_path, rig.cluster_id)
            try:
                real.start()
                # ... then the other controllers one at a time, the active one last
                for node in sorted(nodes, key=lambda n: n is leader):
                    node.restart()
                brokers = ("then restart the brokers one at a time, each waited for until "
                           "every partition's ISR is full again")
                assert brokers in said, said
                for broker in rig.cluster.brokers:  # ... then the brokers, one at a time
                    _restart(broker, rig)
                claim = wait_for_kraft_claim(rig.zk, 240)
                everyone = [*nodes, real]
                logs = "\n".join(n.log_text() for n in everyone)
                assert claim.get("kraftControllerEpoch", -1) > 1, logs[-6000:]
                claimer = next(n for n in everyone if n.node_id == claim["brokerid"])
                dual_write_at(claimer, 240)
                wait_available(rig.bootstrap, "load-000", TOPICS)
                report = canary.stop(None, drain_timeout_s=240)  # its consumer lags at load 60
                _assert_nothing_lost(report)
                _assert_brokers_fine(rig.cluster.brokers)
                assert "Encountered fatal fault" not in logs
                _assert_registered(rig.cluster.brokers, claimer)
            finally:
                real.stop()
    finally:
        canary.stop(None, drain_timeout_s=0)
    rig.timings["after-fence case"] = time.monotonic() - started


def test_killed_before_the_fence_then_start_over(rig: Rig) -> None:
    case = _case(rig, "before-fence")
    started = time.monotonic()
    canary = _canary(rig)
    try:
        claim_before = rig.zk.get("/controller")[0]
        with _standin_then_controllers(rig, case, *rig.canary_args(),
                                       env={"ZK2KRAFT_CRASH_AT": "before_fence"}) as (run, nodes):
            _killed(run, "before_fence")
            leader = _new_leader(nodes)
            rerun = migrate_through_standin(rig.connect, rig.ports, case, *rig.canary_args())
            said = _said(rerun)
            assert rerun.returncode == 1, said
            assert rig.zk.get("/controller")[0] == claim_before  # not fenced
            assert "ZooKeeper was not fenced" in said, said
            assert "start over with zk2kraft, in this order" in said, said
            assert (f"the brokers follow controller {leader.node_id} at epoch") in said, said
            # start over, word for word
            for node in nodes:  # (1) stop every KRaft controller, read /migration ...
                node.stop()
            assert f"zookeeper-shell {rig.connect} get /migration" in said, said
            if rig.zk.exists("/migration") is not None:
                if json.loads(rig.zk.get("/migration")[0])["kraft_metadata_offset"] == -1:
                    rig.zk.delete("/migration")  # ... nothing migrated: delete it
            for node in nodes:  # (2) re-format each controller's metadata.log.dir
                shutil.rmtree(node.metadata_log_dir)
                storage_format(node.config_path, rig.cluster_id)
            assert f"empty {case / 'standin'} and remove {case / 'journal' / 'journal.json'}" \
                in said, said
            shutil.rmtree(case / "standin")  # (3) empty the stand-in's dir, remove the journal
            (case / "standin").mkdir()
            (case / "journal" / "journal.json").unlink()
            for broker in rig.cluster.brokers:  # (4) the brokers, one at a time
                restart_without_metadata_log(broker, rig.zk, rig.bootstrap)
            assert ("(5) run this command again and then, within the 120 s it asks for votes, "
                    "start the controllers") in said, said
            again = _Running(rig, case, *rig.canary_args())  # (5) this command again ...
            again.wait_for(f"stand-in {STANDIN} listening on")
            for node in nodes:  # ... then the controllers
                node.launch()
            for node in nodes:
                node.wait_started()
            code, said = again.finish()
            rig.left_migrated = case
            said = " ".join(said.split())
            logs = "\n".join(n.log_text() for n in nodes)
            assert code == 0, said + logs[-5000:]
            doc = json.loads((case / "m.json").read_text())
            assert (doc["status"], doc["problems"], doc["brokers_unregistered_at_fence"]) == (
                "ok", [], []), doc["problems"]
            assert doc["canary"]["records"]["missing"] == 0, doc["canary"]["records"]
            wait_available(rig.bootstrap, "load-000", TOPICS)
            report = canary.stop(None, drain_timeout_s=240)  # its consumer lags at load 60
            _assert_nothing_lost(report)
            _assert_brokers_fine(rig.cluster.brokers)
            assert "Encountered fatal fault" not in logs
    finally:
        canary.stop(None, drain_timeout_s=0)
    rig.timings["before-fence case"] = time.monotonic() - started


def test_broker_pointed_elsewhere_broker_wait_runs_out(rig: Rig) -> None:
    """Broker 1 in migration mode but its controller.quorum.voters names another quorum (a
    typo'd port): it never registers with the stand-in."""
    elsewhere = f"{STANDIN}@127.0.0.1:{free_port()}"
    if rig.left_migrated is not None:
        started = time.monotonic()
        _hand_back(rig, rig.left_migrated, point_broker_1_at=elsewhere)
        rig.timings["hand back before broker-wait"] = time.monotonic() - started
    else:
        restart_without_metadata_log(rig.cluster.brokers[1], rig.zk, rig.bootstrap,
                                     update={"controller.quorum.voters": elsewhere})
    case = _case(rig, "broker-wait")
    started = time.monotonic()
    canary = _canary(rig)
    try:
        with _standin_then_controllers(rig, case, *rig.canary_args(15)) as (run, nodes):
            code, said = run.finish()
            rig.left_migrated = case
            said = " ".join(said.split())
            logs = "\n".join(n.log_text() for n in nodes)
            print(f"\nbroker-wait ran out: exit {code}: {said[-3000:]}")
            assert code == 4, said + logs[-4000:]
            # both may still be registering when the gate starts; broker 1 never does
            assert re.search(r"cutover waits for broker\(s\) \[(0, )?1\] to register with the "
                             r"stand-in", said), said
            assert "WARNING: broker(s) [1] did not register with the stand-in within 15s" in said
            doc = json.loads((case / "m.json").read_text())
            codes = [p["code"] for p in doc["problems"]]
            assert doc["status"] == "unconfirmed" and "BROKERS_UNREGISTERED_AT_FENCE" in codes, \
                doc["problems"]
            assert doc["brokers_unregistered_at_fence"] == [1]
            assert "controller.quorum.voters naming the stand-in's slot" in said, said
            # the advice: broker 1 in migration mode with the voters naming the slot, restarted
            broker = rig.cluster.brokers[1]
            registration = f"/brokers/ids/{broker.broker_id}"
            broker.restart(update={"controller.quorum.voters": rig.voters},
                           ready_to_start=lambda: rig.zk.exists(registration) is None)
            wait_available(rig.bootstrap, "load-000", TOPICS)
            report = canary.stop(None, drain_timeout_s=240)  # its consumer lags at load 60
            _assert_nothing_lost(report)
            _assert_brokers_fine(rig.cluster.brokers)
            claimer = next(n for n in nodes
                           if n.node_id == json.loads(rig.zk.get("/controller")[0])["brokerid"])
            assert re.search(r"(Registering a new incarnation of broker|No previous registration "
                             r"found for broker) 1", claimer.log_text()), claimer.log_text()[-4000:]
            again = migrate_through_standin(rig.connect, rig.ports, case, *rig.canary_args(15))
            print(f"\nre-run after the advice: exit {again.returncode}: "
                  f"{_said(again)[-1500:]}")
    finally:
        canary.stop(None, drain_timeout_s=0)
    rig.timings["broker-wait case"] = time.monotonic() - started

