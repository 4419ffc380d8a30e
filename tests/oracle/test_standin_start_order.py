"""The printed stand-in sequence run literally, and the controllers started in any order
(issue 16, items 1 and 4, and "the rehearsals execute the printed sequence literally").

Every case takes what it runs from `zk2kraft plan --standin ... --json` (`operator_sequence`,
the data plan's text and docs/runbooks/online-standin.md are rendered from): each controller's
printed properties, the format command and the `zk2kraft migrate` command of step 3, the
`kill -USR1` of step 4. The test fills in only what an operator supplies: directories, ports
(chosen before `plan`, which prints them back), placeholders (`<...>`). `tests/support/
migration_cluster.PrintedSequence` does the reading and asserts that nothing else is changed.

Kafka 3.9.1's controllers in migration mode get-or-create `/migration` when they start, holding
Kafka's "nothing migrated yet" state (`ZkMigrationLeadershipState.EMPTY`:
`{"version":0,"kraft_controller_id":-1,"kraft_controller_epoch":-1,"kraft_metadata_offset":-1,
"kraft_metadata_epoch":-1}`). Before, a zk2kraft that read ZooKeeper before they did refused
its own fence (exit 3, "/migration changed since this run read and judged it"). Three orders:

* the printed one (step 3: zk2kraft, then the controllers once it listens), on three real
  ZooKeeper-mode brokers in migration mode that run exactly their printed properties, holding
  `ZK2KRAFT_REHEARSAL_PARTITIONS` partitions (default 1,000, the issue's size), with the canary's
  producer and consumer throughout (the printed command's own `--bootstrap-server`, built from
  the brokers' registered listeners; nothing added to it). Healthy means Kafka says so: exit 0,
  status `ok`, no problem, the new leader in DUAL_WRITE on our log, every broker running without
  a `raftManager fault`, every acknowledged record consumed once; step 4's printed `verify`
  check passes;
* `controllers_first` (they created `/migration` before zk2kraft starts) and `together`, on a
  sample cluster whose brokers exist only in ZooKeeper (what is rehearsed is the `/migration`
  race, at the smallest size): a real controller leads, claims `/controller` above our epoch
  and logs "Loaded ZK migration state of MIGRATION", with no fatal fault; the brokers never
  register, so each run ends with exit 4 and exactly one problem,
  `BROKERS_UNREGISTERED_AT_FENCE` (item 3: no false success), after `--broker-wait 1
  --fence-without-brokers` (added: no broker can register; the printed `--bootstrap-server`
  left out, its hosts do not exist).
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from kazoo.client import KazooClient

from samples import SampleSpec
from tests.support.kafka import KafkaController
from tests.support.migration_cluster import (
    PrintedSequence,
    cut_over_by_signal,
    kraft_controller_took_over,
    migration_cluster,
    printed_sequence,
    produce_and_consume,
    wait_for_kraft_claim,
)
from tests.support.ports import free_port
from tests.support.standin import STANDIN, STANDIN_FOLLOWERS

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

PARTITIONS = int(os.environ.get("ZK2KRAFT_REHEARSAL_PARTITIONS", "1000"))
_PER_TOPIC = 50
EMPTY_MIGRATION = {"version": 0, "kraft_controller_id": -1, "kraft_controller_epoch": -1,
                   "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}
"""Kafka's ZkMigrationLeadershipState.EMPTY as MigrationZNode encodes it (hand-written)."""


def _wait(what: str, ready: Callable[[], bool], timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _controllers(seq: PrintedSequence, root: Path,
                 fill: dict[str, str] | None = None) -> list[KafkaController]:
    return seq.controllers(root, fill)


@contextlib.contextmanager
def _stopped_at_exit(nodes: list[KafkaController]) -> Iterator[list[subprocess.Popen[str]]]:
    """Collects the zk2kraft processes started; kills those still running, stops the
    controllers."""
    procs: list[subprocess.Popen[str]] = []
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        for node in nodes:
            node.stop()


def _create_topics(bootstrap: str, partitions: int) -> None:
    # librdkafka gives up on a request in flight after socket.timeout.ms (60 s by default, 300 s
    # at most) whatever request_timeout says: at load 28 the 1,000 partitions' CreateTopics did
    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300_000})
    topics = [NewTopic(f"load-{i:03d}", num_partitions=min(_PER_TOPIC, partitions - start),
                       replication_factor=2)
              for i, start in enumerate(range(0, partitions, _PER_TOPIC))]
    # a loaded host's ZooKeeper controller took over 180 s for 1,000 (one run at load 41)
    for f in admin.create_topics(topics, request_timeout=600).values():
        f.result(660)


def test_the_printed_sequence_run_literally_with_brokers_in_migration_mode(
    tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect, zk = tmp_path, f"{zk_server.connect}{zk_chroot}", zk_chroot_client
    started = time.monotonic()
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    # steps 1-2: the brokers in migration mode (checked against what plan prints below)
    with migration_cluster(root, connect, brokers=3, heap="320m", voters=voters,
                           extra={"inter.broker.protocol.version": "3.9-IV0"}) as cluster:
        _create_topics(cluster.bootstrap, PARTITIONS)
        seq = printed_sequence(connect, ports, root / "standin")
        seq.assert_brokers_run_printed(cluster.brokers)
        assert seq.start_order() == ["zk2kraft", "controllers"]
        nodes = _controllers(seq, root)  # configured and formatted as step 3 prints
        with _stopped_at_exit(nodes) as procs:
            # step 3, in its order: zk2kraft, then the controllers once it listens (it read
            # ZooKeeper before they made /migration: "appeared or changed" below says so)
            proc = seq.run_step3(root, nodes)  # as printed: --bootstrap-server included
            procs.append(proc)
            out, err = cut_over_by_signal(proc, root / ".zk2kraft-journal" / "journal.json")
            said = " ".join((out + err).split())
            logs = "\n".join(n.log_text() for n in nodes)
            assert proc.returncode == 0, said + logs[-6000:]
            assert "/migration appeared or changed since it was judged" in said, said
            doc = json.loads((root / "report.json").read_text())
            assert (doc["status"], doc["problems"], doc["brokers_unregistered_at_fence"],
                    doc["brokers_not_following_new_leader"]) == ("ok", [], [], []), doc
            leader = kraft_controller_took_over(zk, nodes)
            records = doc["canary"]["records"]
            assert records["acked"] > 0 and (records["missing"], records["duplicates"]) == (
                0, 0), records
            # the printed command's --bootstrap-server and --html (issue 30, finding 3): the
            # client-observed window is in the report, and the page was written
            assert doc["window_ms"]["observed"] is not None, doc["window_ms"]
            assert (root / "report.html").is_file()
            # step 4's check, as printed, on the new leader's metadata.log.dir
            (check,) = [a for a in seq.step("Cut over") if a.startswith("check: ")]
            argv = check.removeprefix("check: zk2kraft ").replace(
                "--voter N=DIR (a controller's metadata.log.dir)",
                f"--voter {leader.node_id}={leader.metadata_log_dir}").split()
            verified = subprocess.run([sys.executable, "-m", "migrate.cli", *argv],
                                      capture_output=True, text=True, timeout=300)
            assert verified.returncode == 0, verified.stdout + verified.stderr
            for broker in cluster.brokers:
                broker.assert_running()
                assert "raftManager fault" not in broker.all_logs_text(), broker.broker_id
            assert "Encountered fatal fault" not in "\n".join(n.log_text() for n in nodes)
            produce_and_consume(cluster.bootstrap, "load-000")
    print(f"\nprinted sequence, {PARTITIONS} partitions, 3 brokers: "
          f"{time.monotonic() - started:.0f} s; window {doc['window_ms']}")


@pytest.mark.parametrize("order", ["controllers_first", "together"])
def test_the_fence_takes_over_the_controllers_empty_migration_znode_in_other_start_orders(
    sample_cluster: Callable[..., Any], tmp_path: Path, order: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    assert zk.exists("/migration") is None
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    seq = printed_sequence(cluster.connect, ports, tmp_path / "standin")
    # the placeholders an operator fills: the brokers' inter-broker listener (the sample's
    # brokers advertise several) and their delegation-token secret (the sample holds a token)
    nodes = _controllers(seq, tmp_path, {
        "inter.broker.listener.name": "PLAINTEXT",
        "delegation.token.secret.key": "zk2kraft-oracle-token-secret"})
    with _stopped_at_exit(nodes) as procs:
        if order == "together":
            procs.append(seq.start_migrate(
                tmp_path, "--broker-wait", "1", "--fence-without-brokers", no_brokers=True))
        for node in nodes:
            node.launch()
        if order == "controllers_first":
            for node in nodes:
                node.wait_started()
            _wait("the controllers to create /migration",
                  lambda: zk.exists("/migration") is not None, 60)
            assert json.loads(zk.get("/migration")[0]) == EMPTY_MIGRATION
            procs.append(seq.start_migrate(
                tmp_path, "--broker-wait", "1", "--fence-without-brokers", no_brokers=True))
        (proc,) = procs
        out, err = cut_over_by_signal(proc, tmp_path / ".zk2kraft-journal" / "journal.json")
        logs = "\n".join(n.log_text() for n in nodes)
        said = " ".join((out + err).split())
        assert proc.returncode == 4, said + logs[-5000:]
        assert "changed since this run read and judged it" not in said
        doc = json.loads((tmp_path / "report.json").read_text())
        assert doc["status"] == "unconfirmed"
        assert [p["code"] for p in doc["problems"]] == ["BROKERS_UNREGISTERED_AT_FENCE"]
        assert doc["brokers_unregistered_at_fence"] == sorted(
            int(b) for b in zk.get_children("/brokers/ids"))
        assert doc["handover"]["new_leader"] in STANDIN_FOLLOWERS
        claim = wait_for_kraft_claim(zk, 120)
        logs = "\n".join(n.log_text() for n in nodes)
        assert claim.get("kraftControllerEpoch", -1) > 1, logs[-5000:]
        leader = next(n for n in nodes if n.node_id == claim["brokerid"])
        assert "Loaded ZK migration state of MIGRATION" in leader.log_text()
        assert "Encountered fatal fault" not in logs
