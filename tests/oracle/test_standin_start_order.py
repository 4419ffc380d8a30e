"""`migrate --standin` and the controllers started in any order (issue 16, item 1).

Kafka 3.9.1's controllers in migration mode get-or-create `/migration` when they start, holding
Kafka's "nothing migrated yet" state (`ZkMigrationLeadershipState.EMPTY`:
`{"version":0,"kraft_controller_id":-1,"kraft_controller_epoch":-1,"kraft_metadata_offset":-1,
"kraft_metadata_epoch":-1}`). Before, a zk2kraft that read ZooKeeper before they did refused
its own fence (exit 3, "/migration changed since this run read and judged it"). Three orders,
each on its own real controllers and its own ZooKeeper chroot:

* `zk2kraft_first`: migrate runs (and has read the tree, its stand-in listening) before the
  controllers are launched;
* `controllers_first`: the controllers have created `/migration` before migrate starts;
* `together`: both launched at the same moment.

Each must fence and hand over: a real controller leads, claims `/controller` above our epoch and
logs "Loaded ZK migration state of MIGRATION", with no fatal fault. The sample's brokers exist
only in ZooKeeper and never register, so each run ends with exit 4 and exactly one problem,
`BROKERS_UNREGISTERED_AT_FENCE`, in the `--json` report (item 3: no false success); Kafka's own
facts above are what says the order worked.
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.kafka import free_port
from tests.support.migration_cluster import wait_for_kraft_claim
from tests.support.standin import (
    STANDIN,
    STANDIN_FOLLOWERS,
    migrate_through_standin,
    migration_mode_controllers,
)
from zkreader import SampleSpec

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

EMPTY_MIGRATION = {"version": 0, "kraft_controller_id": -1, "kraft_controller_epoch": -1,
                   "kraft_metadata_offset": -1, "kraft_metadata_epoch": -1}
"""Kafka's ZkMigrationLeadershipState.EMPTY as MigrationZNode encodes it (hand-written)."""


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("order", ["zk2kraft_first", "controllers_first", "together"])
def test_the_fence_takes_over_the_controllers_empty_migration_znode_in_any_start_order(
    sample_cluster: Callable[..., Any], tmp_path: Path, order: str
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=3, partitions_per_topic=2))
    zk = cluster.client
    cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
    assert zk.exists("/migration") is None
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    proc: subprocess.Popen[str] | None = None

    def start_migrate() -> subprocess.Popen[str]:
        started: subprocess.Popen[str] = migrate_through_standin(
            cluster.connect, ports, tmp_path, popen=True, broker_wait=1)
        return started

    if order == "zk2kraft_first":
        proc = start_migrate()
        # its stand-in listens only after the pre-flight read and judged the tree
        deadline = time.monotonic() + 120
        while not _listening(ports[STANDIN]):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the stand-in did not listen"
            time.sleep(0.2)
        assert zk.exists("/migration") is None  # read before the controllers made it
    elif order == "together":
        proc = start_migrate()
    with migration_mode_controllers(tmp_path, cluster.connect, cluster_id,
                                    ports=ports) as (_, nodes):
        if order == "controllers_first":
            deadline = time.monotonic() + 60
            while zk.exists("/migration") is None:
                assert time.monotonic() < deadline, "the controllers did not create /migration"
                time.sleep(0.2)
            assert json.loads(zk.get("/migration")[0]) == EMPTY_MIGRATION
            proc = start_migrate()
        assert proc is not None
        out, err = proc.communicate(timeout=400)
        logs = "\n".join(n.log_text() for n in nodes)
        said = " ".join((out + err).split())
        assert proc.returncode == 4, said + logs[-5000:]
        assert "changed since this run read and judged it" not in said
        if order == "zk2kraft_first":
            assert "/migration appeared or changed since it was judged" in said, said
        doc = json.loads((tmp_path / "m.json").read_text())
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
