"""A SCRAM user removed while zk2kraft mirrors does not cost Kafka 3.9.1 any other credential.

Kafka 3.9.1 loads the migration transaction as one delta on an empty image, and its
`ScramDelta.apply` drops a mechanism's whole user map when a removal, first in the map's
`HashMap` order, leaves it empty (docs/design/online-run.md, "Kafka 3.9.1 can lose a SCRAM
credential on takeover"). `churn-user-0` (bucket 5 of 16 by Java's String hash) comes before
`alice@example.com` (bucket 8), so a run that mirrors churn-user-0's SCRAM-SHA-256 credential
being created and removed used to leave the controller's image without alice's SCRAM-SHA-256,
and Kafka's SYNC_KRAFT_TO_ZK then rewrote alice's znode with SCRAM-SHA-512 only (seen with
`scripts/demo.sh --standin` on 2026-11-26). zk2kraft now states the live credentials again in a
transaction of their own after the migration's; here a real KRaft controller in migration mode
takes the log over, reaches DUAL_WRITE, and alice's znode in ZooKeeper still holds both
mechanisms, as written before the run (the expected values are the credential strings this test
wrote).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from samples._cluster import scram_credential
from tests.support.migration_cluster import (
    CONTROLLER_ID,
    dual_write_at,
    migration_cluster,
    migration_controller,
    on_cutover_gate,
)
from tests.support.scram_restatement import RESTATEMENT
from writers import open_log_source

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
ALICE = "/config/users/alice%40example.com"
CHURN = "/config/users/churn-user-0"


def _records(voter: Path) -> list[Any]:
    out: list[Any] = []
    try:
        for entry in open_log_source(voter).entries():
            out += list(entry.batch.records)
    except Exception:  # the run is appending: a torn tail is read again on the next poll
        return []
    return out


def _until(what: str, check: Any, proc: subprocess.Popen[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate() if proc.poll() is not None else ("", "")
            raise AssertionError(f"waiting for {what}: exit {proc.poll()}\n{out}{err}")
        time.sleep(0.2)  # polling the run's log on disk


def _scram_names(voter: Path, kind: str) -> set[str]:
    return {str(r.data["name"]) for r in _records(voter) if getattr(r, "type", None) == kind}


def test_a_scram_user_removed_in_the_mirror_leaves_kafka_every_other_credential(
    tmp_path: Path, zk_server: Any, zk_chroot: str
) -> None:
    connect = f"{zk_server.connect}{zk_chroot}"
    zk = KazooClient(connect)
    zk.start()
    sha256, _ = scram_credential(7, "alice@example.com", "SCRAM-SHA-256")
    sha512, _ = scram_credential(7, "alice@example.com", "SCRAM-SHA-512")
    try:
        with migration_cluster(tmp_path, connect, brokers=1) as cluster:
            zk.create(ALICE, json.dumps({"version": 1, "config": {
                "SCRAM-SHA-256": sha256, "SCRAM-SHA-512": sha512}}).encode(), makepath=True)
            voter = tmp_path / f"voter{CONTROLLER_ID}"
            controller = migration_controller(tmp_path, cluster, voter)
            with on_cutover_gate(tmp_path, controller) as command:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
                     "--voter", f"{CONTROLLER_ID}={voter}", "--cutover", "manual",
                     "--on-cutover", command, "--handoff-timeout", "240",
                     "--json", str(tmp_path / "m.json")],
                    cwd=ROOT, env=ENV, text=True, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE)
                try:
                    journal = voter.parent / ".zk2kraft-journal" / "journal.json"
                    _until("the mirror", lambda: journal.exists() and json.loads(
                        journal.read_text())["phase"] == "mirror", proc)
                    churn, _ = scram_credential(8, "churn-user-0", "SCRAM-SHA-256")
                    zk.create(CHURN, json.dumps({"version": 1, "config": {
                        "SCRAM-SHA-256": churn}}).encode())
                    _until("churn-user-0 mirrored", lambda: "churn-user-0" in _scram_names(
                        voter, "USER_SCRAM_CREDENTIAL_RECORD"), proc)
                    zk.delete(CHURN)
                    _until("its removal mirrored", lambda: "churn-user-0" in _scram_names(
                        voter, "REMOVE_USER_SCRAM_CREDENTIAL_RECORD"), proc)
                    proc.send_signal(signal.SIGUSR1)
                    out, err = proc.communicate(timeout=600)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
                assert proc.returncode == 0, out + err
                assert "restated 2 SCRAM credential(s)" in out + err, out + err
                # right after the migration's EndTransactionRecord (the controller appends after
                # the restatement once it leads): Begin(restatement), alice's two, End
                records = [r for r in _records(voter) if hasattr(r, "data")]
                types = [r.type for r in records]
                state = types.index("ZK_MIGRATION_STATE_RECORD")
                end = types.index("END_TRANSACTION_RECORD", state)
                tail = records[end + 1:end + 5]
                assert [r.type for r in tail] == [
                    "BEGIN_TRANSACTION_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
                    "USER_SCRAM_CREDENTIAL_RECORD", "END_TRANSACTION_RECORD"], types[end:]
                assert tail[0].data["name"] == RESTATEMENT
                assert {(r.data["name"], r.data["mechanism"]) for r in tail[1:3]} == {
                    ("alice@example.com", 1), ("alice@example.com", 2)}
                dual_write_at(controller)
                # Kafka's full sync to ZooKeeper ran before DUAL_WRITE: alice's znode as written
                config = json.loads(zk.get(ALICE)[0])["config"]
                assert config == {"SCRAM-SHA-256": sha256, "SCRAM-SHA-512": sha512}, config
                assert zk.exists(CHURN) is None
                r = subprocess.run(
                    [sys.executable, "-m", "migrate.cli", "verify", "--zookeeper", connect,
                     "--voter", f"{CONTROLLER_ID}={voter}"],
                    cwd=ROOT, env=ENV, text=True, capture_output=True, timeout=600)
                assert r.returncode == 0, r.stdout + r.stderr
    finally:
        zk.stop()
