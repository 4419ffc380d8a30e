"""A `migrate --standin` refused by blockers leaves nothing on real Kafka 3.9.1 controllers.

Controllers 3001 and 3002 run in migration mode with a long election timeout, waiting for the
stand-in 3000 (as in test_standin_migrate_cli.py). The ZooKeeper tree holds two blockers: a
topic created before Kafka 2.8 (no topic id) and an unprocessed log-dir failure event. The run
must exit 1 naming both, having asked no controller for a vote: Kafka's own files say so (no
quorum-state that voted for or follows 3000, no LeaderChange naming 3000 and nothing appended
under it in either controller's log), and there is no journal and nothing in the stand-in's
directory. Once the blockers are fixed as an operator would (the topic gets its id, the event is
handled), `--cutover now --broker-wait 2` stops with exit 3 naming the brokers that never
register, nothing fenced (issue 30); the same command again (with `--fence-without-brokers`:
the sample's brokers exist only in ZooKeeper) resumes, migrates, and a real controller takes
over from the migrated log.
Second: the empty `/migration` the controllers created is what the stand-in judged; rewritten
between its pre-copy and its fence (as a controller recording itself would), the fence refuses
with nothing applied in ZooKeeper. The refused stand-in hands the quorum over with EndQuorumEpoch
(issue 17): a controller leads at once, not after the controllers' fetch timeout (60 s here, so
that the difference shows), and the advice names it. The advice is then followed: `/migration`
deleted, the same command again, which cannot lead again and says ZooKeeper was not fenced.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.kafka import KafkaController
from tests.support.migration_cluster import wait_for_kraft_claim
from tests.support.standin import migration_mode_controllers, verify_voter_dir
from writers import ControlRecord, open_log_source

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

STANDIN, REAL = 3000, (3001, 3002)
EVENT = "/log_dir_event_notification/log_dir_event_0000000009"


def _controllers(tmp_path: Path, connect: str, cluster_id: str
                 ) -> contextlib.AbstractContextManager[tuple[dict[int, int],
                                                             list[KafkaController]]]:
    """Controllers 3001 and 3002 waiting for stand-in 3000. Their election timeout (60 s) is
    longer than both runs of this test take to reach the stand-in's election, so the only
    election they can hold is one the stand-in starts."""
    return migration_mode_controllers(
        tmp_path, connect, cluster_id,
        {"controller.quorum.election.timeout.ms": "60000",
         "controller.quorum.fetch.timeout.ms": "60000"})


def _command(connect: str, ports: dict[int, int], tmp_path: Path, mode: str) -> list[str]:
    return [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
            "--cutover", mode,
            "--standin", f"{STANDIN}@127.0.0.1:{ports[STANDIN]}={tmp_path / 'standin'}",
            *[f"--controller={n}@127.0.0.1:{ports[n]}" for n in REAL],
            "--journal", str(tmp_path / "journal"), "--json", str(tmp_path / "m.json"),
            "--fence-without-brokers"]  # the sample's brokers exist only in ZooKeeper


def _migrate(connect: str, ports: dict[int, int], tmp_path: Path
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(connect, ports, tmp_path, "now"), capture_output=True,
                          text=True, timeout=400)


def _leaders_in_log(meta_dir: Path) -> list[tuple[int, int | None]]:
    """(batch base offset, leader named by the last LeaderChange before it) for every batch
    in a controller's `__cluster_metadata-0`, as Kafka wrote it from what it fetched."""
    leader: int | None = None
    out = []
    for entry in open_log_source(meta_dir).entries():
        for r in entry.batch.records:
            if isinstance(r, ControlRecord) and r.type == "LEADER_CHANGE":
                leader = int(r.data["leaderId"])  # type: ignore[arg-type]
        out.append((entry.batch.base_offset, leader))
    return out


def test_a_refused_standin_run_leaves_the_controllers_untouched_and_a_fixed_rerun_migrates(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    brokers = sorted(int(b) for b in zk.get_children("/brokers/ids"))[:2]
    # a topic from before Kafka 2.8: version 1, no topic_id
    zk.create("/brokers/topics/legacy", json.dumps(
        {"version": 1, "partitions": {"0": brokers}}).encode())
    zk.create("/brokers/topics/legacy/partitions/0/state", json.dumps(
        {"version": 1, "leader": brokers[0], "leader_epoch": 0, "controller_epoch": 1,
         "isr": brokers}).encode(), makepath=True)
    zk.create(EVENT, json.dumps({"version": 1, "broker": brokers[1], "event": 1}).encode(),
              makepath=True)
    watched = ("/controller", "/controller_epoch", "/migration")
    with _controllers(tmp_path, cluster.connect, cluster_id) as (ports, nodes):
        before = {p: zk.get(p) if zk.exists(p) else None for p in watched}
        refused = _migrate(cluster.connect, ports, tmp_path)
        said = " ".join(refused.stderr.split())
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert "TOPIC_WITHOUT_ID /brokers/topics/legacy:" in said, refused.stderr
        assert f"LOG_DIR_EVENT_PENDING {EVENT}:" in said, refused.stderr
        assert "nothing was written" in said
        # nothing of ours anywhere: no journal, an empty stand-in dir, ZooKeeper's controller
        # znodes as they were, and on each controller's disk no vote for 3000 and no record
        # of an epoch it led
        assert not (tmp_path / "journal").exists()
        assert not (tmp_path / "standin").exists() or not any((tmp_path / "standin").iterdir())
        assert {p: zk.get(p) if zk.exists(p) else None for p in watched} == before
        for node in nodes:
            state = json.loads((node.metadata_log_dir / "__cluster_metadata-0"
                                / "quorum-state").read_text())
            assert state.get("votedId", -1) != STANDIN, state
            assert state.get("leaderId", -1) != STANDIN, state
            assert all(leader in REAL for _, leader in _leaders_in_log(node.metadata_log_dir))
            assert "leader=3000" not in node.log_text()
        # the operator fixes both: the topic gets the id Kafka would assign, the event is
        # handled by ZooKeeper's controller (here: removed, as it does once done)
        zk.set("/brokers/topics/legacy", json.dumps(
            {"version": 3, "partitions": {"0": brokers}, "adding_replicas": {},
             "removing_replicas": {}, "topic_id": "mFq1Ns8gS0uV6ZyHk3cTbg"}).encode())
        zk.delete(EVENT)
        # issue 30: `--cutover now` over brokers that never register with the stand-in waits
        # the printed --broker-wait, then stops with exit 3 naming them, nothing fenced
        listed = sorted(int(b) for b in zk.get_children("/brokers/ids"))
        fenced_by = {p: zk.get(p) for p in ("/controller", "/controller_epoch")}
        waited = subprocess.run(
            [*[a for a in _command(cluster.connect, ports, tmp_path, "now")
               if a != "--fence-without-brokers"], "--broker-wait", "2"],
            capture_output=True, text=True, timeout=400)
        said = " ".join((waited.stdout + waited.stderr).split())
        assert waited.returncode == 3, said
        why = [f"broker {b} (not registered with the stand-in, not fetching)" for b in listed]
        assert (f"cutover waits for {'; '.join(why)} to be registered with the stand-in and "
                "fetching (at most 2s, --broker-wait)") in said, said
        assert (f"cutover not done: after --broker-wait 2s still {'; '.join(why)}. Nothing was "
                "fenced: ZooKeeper's controller keeps running the cluster.") in said, said
        assert {p: zk.get(p) for p in fenced_by} == fenced_by
        # the same command again, within the controllers' fetch timeout: it resumes
        done = _migrate(cluster.connect, ports, tmp_path)
        logs = "\n".join(n.log_text() for n in nodes)
        # the sample's brokers exist only in ZooKeeper: the run ends unconfirmed (exit 4)
        assert done.returncode == 4, done.stdout + done.stderr + logs[-5000:]
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["blockers"] == [] and doc["resumed_from"] == "mirror", doc["resumed_from"]
        assert [p["code"] for p in doc["problems"]] == ["BROKERS_UNREGISTERED_AT_FENCE"]
        assert doc["handover"]["new_leader"] in REAL
        claim = wait_for_kraft_claim(zk, 120)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        leader = next(n for n in nodes if n.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
        assert "Encountered fatal fault" not in logs
    # the leader's own log holds the migration, legacy topic included
    verify_voter_dir(cluster.connect, ports, leader.node_id, leader.metadata_log_dir)


def test_the_standin_fence_refuses_a_migration_znode_rewritten_after_its_precopy(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    with _controllers(tmp_path, cluster.connect, cluster_id) as (ports, nodes):
        # controllers in migration mode create the empty /migration when they start
        deadline = time.monotonic() + 60
        while zk.exists("/migration") is None:
            assert time.monotonic() < deadline, "the controllers did not create /migration"
            time.sleep(0.2)
        judged = zk.exists("/migration").version
        proc = subprocess.Popen(_command(cluster.connect, ports, tmp_path, "manual"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        journal = tmp_path / "journal" / "journal.json"
        deadline = time.monotonic() + 180
        while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the pre-copy did not finish"
            time.sleep(0.1)
        # the other writer: a controller that became active records itself
        zk.set("/migration", json.dumps({"version": 0, "kraft_controller_id": 3002,
                                         "kraft_controller_epoch": 5,
                                         "kraft_metadata_offset": -1,
                                         "kraft_metadata_epoch": -1}).encode())
        left = {p: zk.get(p) for p in ("/controller", "/controller_epoch", "/migration")}
        proc.send_signal(signal.SIGUSR1)
        out, err = proc.communicate(timeout=120)
        logs = "\n".join(n.log_text() for n in nodes)
        assert proc.returncode == 3, out + err + logs[-3000:]
        said = " ".join(err.split())
        # the refusal writes the report asked for, too (issue 16)
        doc = json.loads((tmp_path / "m.json").read_text())
        assert doc["status"] == "failed" and doc["error"]["exit_code"] == 3, doc
        assert (f"/migration changed since this run read and judged it (it was at version "
                f"{judged}, it is now at version {judged + 1})") in said, err
        refused_at = time.monotonic()
        # nothing applied in ZooKeeper
        assert {p: zk.get(p) for p in left} == left
        assert "kraftControllerEpoch" not in json.loads(left["/controller"][0]) or \
            json.loads(left["/controller"][0])["kraftControllerEpoch"] < 1
        # the quorum was handed over: a controller leads well inside the 60 s fetch timeout
        # after which the controllers would otherwise stand, by their own quorum-state
        leader, epoch = _real_leader(nodes, refused_at + 20)
        print(f"\na controller led {time.monotonic() - refused_at:.1f} s after the refusal")
        assert f"handed the KRaft quorum to controller {leader} (epoch {epoch})" in said, err
        # the advice, word for word: /migration deleted deliberately, the same command again
        assert f"zookeeper-shell {cluster.connect} delete /migration" in said, err
        zk.delete("/migration")
        rerun = subprocess.run(_command(cluster.connect, ports, tmp_path, "manual"),
                               capture_output=True, text=True, timeout=300)
        again = " ".join((rerun.stdout + rerun.stderr).split())
        assert rerun.returncode == 1, again
        assert (f"cannot lead again: controller {leader} leads the KRaft quorum at epoch "
                f"{epoch}") in again, again
        assert "ZooKeeper was not fenced" in again, again
        assert {p: zk.get(p) for p in ("/controller", "/controller_epoch")} == {
            p: left[p] for p in ("/controller", "/controller_epoch")}
        # issue 30: a fresh run (no journal, an empty stand-in dir) meeting a quorum a real
        # controller leads is told who leads, that the brokers follow it, and the whole
        # start-over, not "a long election timeout"
        shutil.rmtree(tmp_path / "journal")
        shutil.rmtree(tmp_path / "standin")
        fresh = subprocess.run(_command(cluster.connect, ports, tmp_path, "manual"),
                               capture_output=True, text=True, timeout=300)
        first = " ".join((fresh.stdout + fresh.stderr).split())
        assert fresh.returncode == 1, first
        migration = json.loads(zk.get("/migration")[0]) if zk.exists("/migration") else None
        if migration is not None and migration["kraft_controller_epoch"] >= 0:
            # the leader recorded itself in /migration before this run read it (real 3.9.1
            # does, racing the run's read): the pre-flight refuses on it, with the same cause
            # and way out as the vote refusal below
            assert (f"/migration records a KRaft controller that became active at epoch "
                    f"{migration['kraft_controller_epoch']} with nothing migrated") in first, first
            assert ("The brokers in migration mode follow that controller in their own "
                    "__cluster_metadata-0") in first, first
            assert (f"remove {tmp_path / 'journal' / 'journal.json'}; (4) the brokers in "
                    "migration mode follow the leader of the discarded quorum") in first, first
        else:
            assert (f"zk2kraft's stand-in {STANDIN} cannot lead: controller {leader} leads "
                    f"the KRaft quorum at epoch {epoch}") in first, first
            assert (f"they follow controller {leader} at epoch {epoch} in their own "
                    "__cluster_metadata-0") in first, first
            assert (f"remove {tmp_path / 'journal' / 'journal.json'}; (4) the brokers in "
                    f"migration mode follow controller {leader} at epoch {epoch}") in first, first
        assert "ZooKeeper was not fenced and nothing was migrated" in first, first
        assert f"zookeeper-shell {cluster.connect} get /migration" in first, first
        assert "each stopped, its __cluster_metadata-0 directory deleted" in first, first
        assert "start controllers with a long" not in first, first
        assert not (tmp_path / "journal").exists()
        assert "Encountered fatal fault" not in "\n".join(n.log_text() for n in nodes)


def _real_leader(nodes: list[KafkaController], deadline: float) -> tuple[int, int]:
    """(leader, epoch) once a real controller's own quorum-state says it leads."""
    while True:
        for node in nodes:
            state = json.loads((node.metadata_log_dir / "__cluster_metadata-0"
                                / "quorum-state").read_text())
            if state.get("leaderId") == node.node_id:
                return node.node_id, int(state["leaderEpoch"])
        assert time.monotonic() < deadline, "no controller leads: the quorum was left leaderless"
        time.sleep(0.2)
