"""The stand-in's gate before the fence follows Kafka's check-quorum (issue 17, item 7).

Kafka's fact (3.9 `LeaderState`, `controller.quorum.fetch.timeout.ms`, default 2000 ms): a
leader that has not had a Fetch from a majority of the voters within 1.5 x the fetch timeout
(3 s by default) resigns. The stand-in is the leader during the mirror, so the cutover's gate
must not fence ZooKeeper on a quorum Kafka itself would no longer call led: with both followers
silent for 4 s (past Kafka's 3 s, inside the fixed 5 s the gate used before), the cutover stops
before the fence, exit 3, with ZooKeeper untouched.

Real Kafka 3.9.1: controllers 3001 and 3002 in migration mode follow the stand-in (their own
fetch and election timeouts long, so that their pause is the only thing that changes); the run
is `zk2kraft migrate --standin ... --cutover manual` without `--controller-config`, so the
stand-in takes Kafka's default fetch timeout. Once the mirror runs, both controllers are
stopped with SIGSTOP, 4 s later the cutover is asked for (SIGUSR1), and the controllers stay
stopped until the run has decided (it exits, or ZooKeeper is fenced). Expected values are
Kafka's default and the znodes as they were before the run.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from samples import SampleSpec
from tests.support.standin import migrate_through_standin, migration_mode_controllers

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

KAFKA_CHECK_QUORUM_S = 1.5 * 2.0  # 1.5 x Kafka's default controller.quorum.fetch.timeout.ms
SILENT_S = 4.0  # past Kafka's 3 s, inside the gate's old fixed 5 s
_FENCE_ZNODES = ("/controller", "/controller_epoch", "/migration")


def test_followers_silent_past_kafkas_check_quorum_stop_the_cutover_before_the_fence(
    sample_cluster: Callable[..., Any], tmp_path: Path
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=2, partitions_per_topic=2))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    with migration_mode_controllers(
            tmp_path, cluster.connect, cluster_id,
            {"controller.quorum.election.timeout.ms": "60000",
             "controller.quorum.fetch.timeout.ms": "60000"}, heap="320m") as (ports, nodes):
        proc = migrate_through_standin(cluster.connect, ports, tmp_path, cutover="manual",
                                       broker_wait=0, popen=True)
        stopped: list[int] = []
        try:
            journal = tmp_path / "journal" / "journal.json"
            deadline = time.monotonic() + 300
            while not (journal.exists() and json.loads(journal.read_text())["phase"] == "mirror"):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the run never reached the mirror"
                time.sleep(0.2)
            before = {p: zk.get(p)[0] for p in _FENCE_ZNODES if zk.exists(p)}
            for node in nodes:
                assert node.pid is not None
                os.kill(node.pid, signal.SIGSTOP)
                stopped.append(node.pid)
            time.sleep(SILENT_S)
            proc.send_signal(signal.SIGUSR1)
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                if zk.get("/controller_epoch")[0] != before["/controller_epoch"]:
                    break  # fenced: the gate let the cutover through (the old 5 s gate)
                time.sleep(0.1)
            after = {p: zk.get(p)[0] for p in _FENCE_ZNODES if zk.exists(p)}
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=300)
        said = " ".join((out + err).split())
        assert after == before, f"ZooKeeper was fenced with both followers silent: {said}"
        assert proc.returncode == 3, said
        assert "a majority of voters is no longer writable: stopping before the fence" in said
        assert "ZooKeeper was not changed" in said, said
        assert "Traceback" not in said, said
    print(f"\nfollowers silent {SILENT_S:g} s (Kafka's check-quorum {KAFKA_CHECK_QUORUM_S:g} s): "
          "the cutover stopped before the fence")
