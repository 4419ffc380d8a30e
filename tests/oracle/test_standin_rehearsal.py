"""Rehearsal through the stand-in (issue 9): real Kafka 3.9.1 ZooKeeper-mode brokers in migration
mode, real controllers 3001 and 3002 following zk2kraft as stand-in voter 3000, and clients
running throughout.

Three brokers (`controller.quorum.voters` = 3000, 3001, 3002) hold `REHEARSAL_PARTITIONS`
partitions (default 100: the one rehearsal at 1,000 partitions in CI is the printed sequence's,
test_standin_start_order; `ZK2KRAFT_REHEARSAL_PARTITIONS=1000` runs this one at that size)
created through Kafka's admin API. `zk2kraft migrate --cutover now
--standin ... --bootstrap-server ...` runs the canary: an idempotent acks=all producer and a
consumer on the canary topic for the whole run, and controller-bound requests every 50 ms. Facts
checked against Kafka, not against zk2kraft's code:

* the controller that takes over from the stand-in reaches DUAL_WRITE without WAIT_FOR_BROKERS
  or ZK_MIGRATION (Kafka did not copy ZooKeeper again), claims `/controller` above our epoch and
  never hits a fatal fault;
* every record the producer had acknowledged is consumed, exactly once;
* the brokers follow it: a topic created through a broker after the cutover is written to
  ZooKeeper by the KRaft controller (dual-write), gets leaders, and a record produced to it
  with acks=all is consumed back.

Then the rollback rehearsal, Kafka's documented way back while the brokers are still in
ZooKeeper mode: the controllers stopped, `zk2kraft rollback` (the `/controller` claim and
`/migration` removed, `/controller_epoch` above every partition state's), each broker restarted
without the migration configs. ZooKeeper's controller leads again: an ephemeral `/controller`
held by a broker, ISR changes (a partition's ISR grows back after the restarts) and a clean
leader election when that partition's leader stops, written with its epoch; an acks=all record
is served.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from tests.support.kafka import KafkaZkBroker
from tests.support.migration_cluster import (
    BROKER_MIGRATION_CONFIGS,
    kraft_controller_took_over,
    migration_cluster,
    produce_and_consume,
    wait_for_zk_controller,
    wait_for_znode,
)
from tests.support.ports import free_port
from tests.support.standin import (
    STANDIN,
    STANDIN_FOLLOWERS,
    assert_brokers_stayed_registered,
    migrate_through_standin,
    migration_mode_controllers,
)

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

REHEARSAL_PARTITIONS = int(os.environ.get("ZK2KRAFT_REHEARSAL_PARTITIONS", "100"))
_PER_TOPIC = 50
_CONTROLLER_PROPS = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    # the canary needs the cluster healthy before zk2kraft reads ZooKeeper and stands for
    # election, which takes a while on a loaded machine: the stand-in must still win first
    "controller.quorum.election.timeout.ms": "60000",
}


def _create_topics(bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    topics = []
    left, i = partitions, 0
    while left > 0:
        n = min(_PER_TOPIC, left)
        topics.append(NewTopic(f"load-{i:03d}", num_partitions=n, replication_factor=2))
        left -= n
        i += 1
    for f in admin.create_topics(topics, request_timeout=180).values():
        f.result(240)


def _rollback(root: Path, connect: str, zk: KazooClient, brokers: list[KafkaZkBroker],
              bootstrap: str) -> None:
    """`zk2kraft rollback`, then each broker without the migration configs, restarted one at a
    time (Kafka's guide, "Reverting to ZooKeeper mode During the Migration"); then ZooKeeper's
    controller must lead: a broker stopped, its partitions get a new leader and a smaller ISR
    from that controller, and an acks=all record is served."""
    back = subprocess.run(
        [sys.executable, "-m", "migrate.cli", "rollback", "--zookeeper", connect,
         "--voter", f"{STANDIN}={root / 'standin'}", "--journal", str(root / "journal")],
        capture_output=True, text=True, timeout=120)
    assert back.returncode == 0, back.stdout + back.stderr
    assert "rolled back: removed /controller, /migration" in back.stdout, back.stdout
    for broker in brokers:
        registration = f"/brokers/ids/{broker.broker_id}"
        broker.restart(remove=BROKER_MIGRATION_CONFIGS,
                       ready_to_start=lambda path=registration: zk.exists(path) is None)
    claim = wait_for_zk_controller(zk)
    assert claim["brokerid"] in {b.broker_id for b in brokers}, claim
    zk_epoch = int(zk.get("/controller_epoch")[0])  # the first ZooKeeper controller's after it
    # ISR changes and a leader election, made by ZooKeeper's controller: after the rolling
    # restart both replicas are back in the ISR; then the leader stops, the other replica leads
    path = "/brokers/topics/load-000/partitions/0/state"
    deadline = time.monotonic() + 120
    while len((before := json.loads(zk.get(path)[0]))["isr"]) < 2:
        assert time.monotonic() < deadline, f"load-000-0's ISR never grew back: {before}"
        time.sleep(0.5)
    victim = next(b for b in brokers if b.broker_id == before["leader"])
    victim.stop()
    deadline = time.monotonic() + 120
    while True:
        state = json.loads(zk.get(path)[0])
        if state["leader"] not in (-1, victim.broker_id) and state["isr"] == [state["leader"]]:
            break
        assert time.monotonic() < deadline, f"no new leader for load-000-0: {state}"
        time.sleep(0.5)
    # written by ZooKeeper's controller of the current epoch (zk2kraft rollback lifted the epoch
    # above every partition state's, KAFKA-20488: otherwise this election is refused)
    assert state["leader"] in before["isr"], state  # a clean election
    # (when the stopped leader was the controller too, its successor bumps /controller_epoch
    # once more: the election may carry either epoch, never one from before the rollback)
    assert zk_epoch <= state["controller_epoch"] <= int(zk.get("/controller_epoch")[0]), state
    live = ",".join(b.bootstrap_servers for b in brokers if b is not victim)
    produce_and_consume(live, "load-000")
    print(f"\nrollback: {back.stdout.strip().splitlines()[0]}; load-000-0 leader "
          f"{before['leader']} -> {state['leader']}, isr {before['isr']} -> {state['isr']}")


def test_rehearsal_with_brokers_through_the_standin_then_rollback(
    tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect, zk = tmp_path, f"{zk_server.connect}{zk_chroot}", zk_chroot_client
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    with migration_cluster(root, connect, brokers=3, heap="320m", voters=voters) as cluster:
        _create_topics(cluster.bootstrap, REHEARSAL_PARTITIONS)
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
        with migration_mode_controllers(root, connect, cluster_id, _CONTROLLER_PROPS, ports=ports,
                                        heap="320m") as (_, nodes):
            done = migrate_through_standin(
                connect, ports, root, "--bootstrap-server", cluster.bootstrap,
                "--handoff-timeout", "240",
                *[f"--controller-log={n.server_log}" for n in nodes])
            (root / "migrate.out").write_text(done.stdout + done.stderr)  # for post-mortems
            logs = "\n".join(n.log_text() for n in nodes)
            assert done.returncode == 0, done.stdout + done.stderr + logs[-6000:]
            report = json.loads((root / "m.json").read_text())
            assert report["handover"]["new_leader"] in STANDIN_FOLLOWERS, report["handover"]
            leader = next(n for n in nodes if n.node_id == report["handover"]["new_leader"])
            split = _check_election_split(report, leader.log_text())
            taker = kraft_controller_took_over(zk, nodes)
            rpcs = assert_brokers_stayed_registered(root / "standin", report, taker.log_text(),
                                                    done.stdout + done.stderr)
            # every acknowledged record consumed exactly once, through the whole run
            records = report["canary"]["records"]
            assert records["acked"] > 0 and records["acked"] == records["produced"], records
            assert (records["missing"], records["duplicates"]) == (0, 0), records
            assert report["canary"]["requests"]["ok"] > 0
            # dual-write, and brokers that follow the KRaft controller
            topic = "created-after-cutover"
            admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
            admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=2)],
                                request_timeout=120)[topic].result(180)
            znode = json.loads(wait_for_znode(zk, f"/brokers/topics/{topic}", 120))
            assert sorted(znode["partitions"]) == ["0", "1", "2"], znode
            produce_and_consume(cluster.bootstrap, topic)
            assert "Encountered fatal fault" not in "\n".join(n.log_text() for n in nodes)
            # the rollback rehearsal: Kafka's documented way back while brokers are still in
            # ZooKeeper mode, with `zk2kraft rollback` for the ZooKeeper part
            for node in nodes:  # "deprovision the KRaft controller quorum"
                node.stop()
            _rollback(root, connect, zk, cluster.brokers, cluster.bootstrap)
    window = report["window_ms"]
    print(f"\nrehearsal through the stand-in, {REHEARSAL_PARTITIONS} partitions, 3 brokers: "
          f"tool {window['tool']} ms, total {window['total']} ms, observed "
          f"{window.get('observed')} ms, producer stall {window.get('producer_stall')} ms, "
          f"handover {report['handover']['elapsed_ms']} ms; records {records}; the new "
          f"controller's broker RPCs {rpcs}")
    print("election split (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in split.items())
          + f"; Fetch requests answered while resigned: {report['handover']['fetches_answered']}")


def _log_time(text: str, pattern: str) -> float:
    """The wall-clock time of the first line matching `pattern` in a controller's log."""
    m = re.search(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\][^\n]*" + pattern, text,
                  re.MULTILINE)
    assert m is not None, f"no line matching {pattern!r}"
    return datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() + \
        int(m.group(2)) / 1000.0


def _check_election_split(report: dict[str, Any], leader_log: str) -> dict[str, float]:
    """The election split into sub-parts with the new leader's log: present, in order, adding
    up to `election`, and its log-bound ends where the test itself finds those lines."""
    handover, stamps = report["handover"], report["stamps"]
    node, epoch = handover["new_leader"], handover["new_epoch"]
    # our wall-clock stamps, in the order the run takes them
    order = ["fence", "drained", "migration_written", "handoff", "new_leader", "claimed"]
    walls = [stamps[k]["wall_s"] for k in order]
    assert walls == sorted(walls), stamps
    events = handover["events"]
    # EndQuorumEpoch went to every follower at the log's end (all of them unless the
    # followers_at_end event names one behind), the new leader among them, and each answered
    at_end = next(e for e in events if e["kind"] == "followers_at_end")
    sent_to = {e["node"] for e in events if e["kind"] == "end_quorum_epoch_sent"}
    assert node in sent_to and sent_to <= set(STANDIN_FOLLOWERS), events
    if at_end["detail"] is None:
        assert sent_to == set(STANDIN_FOLLOWERS), events
    for voter in sent_to:
        assert any(e["kind"] == "end_quorum_epoch_answered" and e["node"] == voter
                   for e in events), events
    begin = next(e for e in handover["events"] if e["kind"] == "begin_quorum_epoch_received"
                 and (e["node"], e["epoch"]) == (node, epoch))
    sent = next(e for e in handover["events"]
                if e["kind"] == "end_quorum_epoch_sent" and e["node"] == node)
    election = report["window_ms"]["parts"]["election"]
    assert election["parts"] is not None, election["parts_reason"]
    parts = {k: v["ms"] for k, v in election["parts"].items()}
    names = list(parts)
    assert names in (
        ["followers_catch_up", "end_epoch_write", "end_epoch_to_candidate",
         "candidate_to_leader", "leader_to_begin_epoch", "begin_epoch_to_stamp"],
        ["followers_catch_up", "end_epoch_write", "end_epoch_to_candidate",
         "candidate_to_vote", "vote_answer", "vote_to_leader", "leader_to_begin_epoch",
         "begin_epoch_to_stamp"]), names
    # ordered (the controller's log is stamped to the millisecond, truncated) and adding up
    assert all(v >= -1.0 for v in parts.values()), parts
    assert abs(sum(parts.values()) - election["ms"]) < 0.5, (parts, election["ms"])
    # the log's ends, from the lines this test finds itself
    candidate = _log_time(leader_log, rf"Completed transition to CandidateState\(localId={node},"
                          rf"[^\n]*?epoch={epoch},")
    leads = _log_time(leader_log, rf"Completed transition to Leader\(localReplicaKey=ReplicaKey"
                      rf"\(id={node},[^\n]*?epoch={epoch},")
    assert abs(parts["end_epoch_to_candidate"] - (candidate - sent["wall_s"]) * 1000) < 0.01
    assert abs(parts["leader_to_begin_epoch"] - (begin["wall_s"] - leads) * 1000) < 0.01
    # Candidate -> Leader, however split
    between = sum(parts[k] for k in names[names.index("end_epoch_to_candidate") + 1:-2])
    assert abs(between - (leads - candidate) * 1000) < 0.5, parts
    return parts

