"""Recovery advice followed word for word, and no false success (issue 16, items 2 and 3).

Real Kafka 3.9.1: ZooKeeper-mode brokers in migration mode (`controller.quorum.voters` =
stand-in 3000, controllers 3001 and 3002, each broker running exactly the properties `plan`
prints for it), the canary (`--bootstrap-server`) on every run. The controllers and zk2kraft are
what `zk2kraft plan --standin ... --json` prints (`tests/support/migration_cluster.
PrintedSequence`): the controllers' printed properties (only their directories filled in),
formatted with the printed command, and step 3's `zk2kraft migrate` command started first, the
controllers once its stand-in listens (step 3's order), cut over with `kill -USR1` (step 4);
the test adds the canary's flags and, for the second case, `--on-cutover` and `--html`.

`test_fence_refused_then_start_over_as_advised` (two brokers, `ZK2KRAFT_REHEARSAL_PARTITIONS`,
default 20):
1. The printed command (`--cutover manual`); while it mirrors, `/migration` gets a real claim
   (a controller recording itself); SIGUSR1: the fence refuses (exit 3), and the `--json` report
   is written with status `failed`.
2. The refusal's advice, word for word: the operator deletes `/migration` deliberately and runs
   the same command again, after the controllers elected one of themselves (the issue saw that
   within ~2 s, Kafka's default fetch timeout; the printed one is 30 s). The re-run
   cannot lead again (exit 1) and says how to start over, brokers' `quorum-state` included; its
   report is written too.
3. The start-over, word for word: controllers stopped, their metadata.log.dirs deleted and
   re-formatted, the stand-in's dir emptied, the journal it names removed, the brokers restarted
   one at a time without `__cluster_metadata-0`, each waited for until every ISR is full, the
   command run again and the controllers started once it listens.
Healthy means Kafka says so: exit 0, status `ok`, no problem; the new leader reached DUAL_WRITE
on our log without ZK_MIGRATION; the brokers registered with the stand-in; no broker logged a
`raftManager fault` (the issue's "inconsistent with current leader" crash) or stopped; every
record the canary's producer had acknowledged consumed once; a record produced after it served.

`test_brokers_killed_right_after_the_handoff_end_with_exit_4` (two brokers, 20 partitions: what
is rehearsed is the brokers' death, not the size):
`--on-cutover` (run right after the stand-in resigned) kills every broker (SIGKILL); the run
must end with exit 4, status `unconfirmed` and problems naming the brokers
(`BROKERS_NOT_FOLLOWING` from the new leader's DescribeQuorum, and `BROKERS_NOT_SERVING` or
`NO_CONTROLLER_REQUEST_SERVED` from the canary) in the terminal and in the report. Before, it
ended 0.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.support.availability import restart_without_metadata_log
from tests.support.kafka import KafkaController, KafkaZkBroker
from tests.support.migration_cluster import (
    MigrationCluster,
    PrintedSequence,
    cut_over_by_signal,
    kraft_controller_took_over,
    migration_cluster,
    printed_sequence,
    produce_and_consume,
)
from tests.support.ports import free_port
from tests.support.standin import STANDIN, STANDIN_FOLLOWERS

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

# what is rehearsed is the advice and the brokers' own Raft state, not the size (the printed
# sequence runs at 1,000 partitions in test_standin_start_order)
PARTITIONS = int(os.environ.get("ZK2KRAFT_REHEARSAL_PARTITIONS", "20"))
_REAL_CLAIM = {"version": 0, "kraft_controller_id": 3002, "kraft_controller_epoch": 5,
               "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}


def _create_topics(bootstrap: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics(
        [NewTopic("load-000", num_partitions=partitions, replication_factor=2)],
        request_timeout=180)
    for f in futures.values():
        f.result(240)


def _wait(what: str, ready: Any, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


def _said(done: Any) -> str:
    return " ".join((done.stdout + done.stderr).split())


def _report(root: Path) -> dict[str, Any]:
    """The printed command's `--json report.json` (relative: zk2kraft runs in `root`)."""
    doc: dict[str, Any] = json.loads((root / "report.json").read_text())
    (root / "report.json").unlink()  # each run's report is read once; the next writes its own
    return doc


@contextlib.contextmanager
def _printed_quorum(root: Path, connect: str, brokers: int, partitions: int
                    ) -> Iterator[tuple[MigrationCluster, PrintedSequence,
                                        list[KafkaController]]]:
    """Brokers in migration mode holding `partitions` partitions, each running exactly the
    properties `plan` prints for it, and the printed controllers (configured and formatted,
    not started); everything stopped on exit."""
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    with migration_cluster(root, connect, brokers=brokers, heap="320m", voters=voters,
                           extra={"inter.broker.protocol.version": "3.9-IV0"}) as cluster:
        _create_topics(cluster.bootstrap, partitions)
        seq = printed_sequence(connect, ports, root / "standin")
        seq.assert_brokers_run_printed(cluster.brokers)
        nodes = seq.controllers(root)
        try:
            yield cluster, seq, nodes
        finally:
            for node in nodes:
                node.stop()


def test_fence_refused_then_start_over_as_advised(
    tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect, zk = tmp_path, f"{zk_server.connect}{zk_chroot}", zk_chroot_client
    started = time.monotonic()
    with _printed_quorum(root, connect, 2, PARTITIONS) as (cluster, seq, nodes):
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
        canary = ("--bootstrap-server", cluster.bootstrap, "--broker-wait", "120")
        # 1. the fence refused: /migration rewritten with a real claim while it mirrors
        proc = seq.run_step3(root, nodes, *canary)
        try:
            journal = root / ".zk2kraft-journal" / "journal.json"
            deadline = time.monotonic() + 600
            while not (journal.exists()
                       and json.loads(journal.read_text())["phase"] == "mirror"):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "zk2kraft did not reach the mirror"
                time.sleep(0.2)
            zk.set("/migration", json.dumps(_REAL_CLAIM).encode())
            out, err = cut_over_by_signal(proc, journal)  # step 4: kill -USR1
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        refused = " ".join((out + err).split())
        assert proc.returncode == 3, refused
        assert "changed since this run read and judged it" in refused
        doc = _report(root)
        assert doc["status"] == "failed" and doc["error"]["exit_code"] == 3, doc
        # 2. its advice: delete /migration deliberately, run the same command again; the
        # controllers elect one of themselves once they stop hearing from the stand-in
        assert f"zookeeper-shell {connect} delete /migration" in refused, refused
        zk.delete("/migration")
        _wait("a controller elected without the stand-in", lambda: any(
            "Completed transition to Leader" in n.log_text() for n in nodes), 120)
        rerun = seq.run_again(root, *canary)
        said = _said(rerun)
        assert rerun.returncode == 1, said
        assert "cannot lead again" in said and "start over with zk2kraft, in this order" \
            in said, said
        assert re.search(r"\(4\) the brokers in migration mode follow controller \d+ at epoch "
                         r"\d+ in their own __cluster_metadata-0", said), said
        doc = _report(root)
        assert doc["status"] == "failed" and doc["error"]["exit_code"] == 1, doc
        # 3. start over, word for word
        for node in nodes:  # (1) stop every KRaft controller ...
            node.stop()
        assert f"zookeeper-shell {connect} get /migration" in said, said
        if zk.exists("/migration") is not None:  # ... and a /migration that migrated nothing
            if json.loads(zk.get("/migration")[0])["kraft_metadata_offset"] == -1:
                zk.delete("/migration")
        for node in nodes:  # (2) delete and re-format each metadata.log.dir, as printed
            shutil.rmtree(node.metadata_log_dir)
        seq.format_all(nodes)
        named = re.search(r"\(3\) empty (\S+) and remove (\S+); \(4\)", said)
        assert named is not None, said
        assert Path(named.group(1)) == root / "standin", named.group(1)
        shutil.rmtree(root / "standin")  # (3) empty the stand-in's dir ...
        (root / "standin").mkdir()
        assert Path(named.group(2)).parent == journal.parent, named.group(2)
        shutil.rmtree(journal.parent)  # ... and remove the journal it names
        for broker in cluster.brokers:  # (4) the brokers, one at a time
            restart_without_metadata_log(broker, zk, cluster.bootstrap,
                                         {"load-000": PARTITIONS})
        # (5) the command again and, once it listens, the controllers (step 3's order)
        assert "(5) run this command again and, once it listens" in said, said
        again = seq.run_step3(root, nodes, *canary)
        try:
            out, err = cut_over_by_signal(again, journal)
        finally:
            if again.poll() is None:
                again.kill()
                again.communicate()
        _assert_healthy(again.returncode, out + err, root, zk, nodes, cluster.brokers,
                        cluster.bootstrap)
        assert cluster_id == json.loads(zk.get("/cluster/id")[0])["id"]
    print(f"\nrecovery rehearsal ({PARTITIONS} partitions, 2 brokers): "
          f"{time.monotonic() - started:.0f} s")


def _assert_healthy(code: int, output: str, root: Path, zk: KazooClient,
                    nodes: list[KafkaController], brokers: list[KafkaZkBroker],
                    bootstrap: str) -> None:
    said = " ".join(output.split())
    logs = "\n".join(n.log_text() for n in nodes)
    assert code == 0, said + logs[-6000:]
    doc = _report(root)
    assert (doc["status"], doc["problems"], doc["brokers_unregistered_at_fence"],
            doc["brokers_not_following_new_leader"]) == ("ok", [], [], []), doc["problems"]
    kraft_controller_took_over(zk, nodes)
    records = doc["canary"]["records"]
    assert records["acked"] > 0 and (records["missing"], records["duplicates"]) == (0, 0), \
        records
    for broker in brokers:
        broker.assert_running()
        assert "raftManager fault" not in broker.all_logs_text(), broker.broker_id
    assert "Encountered fatal fault" not in "\n".join(n.log_text() for n in nodes)
    produce_and_consume(bootstrap, "load-000")


def test_brokers_killed_right_after_the_handoff_end_with_exit_4(
    tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect = tmp_path, f"{zk_server.connect}{zk_chroot}"
    started = time.monotonic()
    with _printed_quorum(root, connect, 2, 20) as (cluster, seq, nodes):
        pids = " ".join(str(b.pid) for b in cluster.brokers)
        proc = seq.run_step3(
            root, nodes, "--bootstrap-server", cluster.bootstrap, "--broker-wait", "120",
            "--handoff-timeout", "30", "--on-cutover", f"kill -9 {pids}",
            "--html", str(root / "m.html"))
        try:
            out, err = cut_over_by_signal(proc, root / ".zk2kraft-journal" / "journal.json")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        said = " ".join((out + err).split())
        logs = "\n".join(n.log_text() for n in nodes)
        assert proc.returncode == 4, said + logs[-4000:]
        doc = _report(root)
        assert doc["status"] == "unconfirmed", doc
        codes = {p["code"] for p in doc["problems"]}
        assert codes & {"BROKERS_NOT_SERVING", "NO_CONTROLLER_REQUEST_SERVED"}, codes
        assert doc["brokers_unregistered_at_fence"] == []  # they were, then they died
        # The new leader leads before --on-cutover starts (the stand-in's handover), so the
        # brokers fetch from it until the kill lands. Most runs: they are dead before the
        # follow check's two DescribeQuorum answers, and it names them. On a busy host the
        # shell's `kill -9` can land after their fetches moved between the two answers, for
        # both brokers or for one (seen in a busy CI run of 2026-11-29: [0] only): the check
        # then rightly saw those following, and the brokers' death is caught afresh
        # (BROKERS_NOT_SERVING / NO_CONTROLLER_REQUEST_SERVED above): exit 4 every way.
        if "BROKERS_NOT_FOLLOWING" in codes:
            named = doc["brokers_not_following_new_leader"]
            assert named in ([0], [1], [0, 1]), doc
        else:
            assert doc["brokers_not_following_new_leader"] == [], doc
            assert "every broker fetches from the new leader" in said, said
        assert "Kafka does NOT confirm a serving cluster (exit 4)" in said, said
        assert "BROKERS_NOT_SERVING" in said or "NO_CONTROLLER_REQUEST_SERVED" in said
        assert "unconfirmed" in (root / "m.html").read_text()
    print(f"\nbrokers killed after the handoff (20 partitions, 2 brokers): "
          f"{time.monotonic() - started:.0f} s, problems {sorted(codes)}")
