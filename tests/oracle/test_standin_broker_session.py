"""The stand-in fences a migrating broker whose heartbeats stop, as Kafka's controller does.

Kafka's facts (3.9 `ReplicationControlManager.maybeFenceOneStaleBroker`, `BrokerHeartbeatManager.
hasValidSession`): an unfenced broker not heard from for more than `broker.session.timeout.ms`
(default 9000 ms; 5000 here, from the controllers' properties the run is given) is fenced with
`BrokerRegistrationChangeRecord(fenced=1)`; a broker heartbeats every
`broker.heartbeat.interval.ms` (default 2000 ms). So a broker killed with SIGKILL must be fenced
no sooner than 5 - 2 s after the kill (its last heartbeat may have been that early) and no later
than 5 s plus slack for this loaded host.

Real Kafka 3.9.1: two ZooKeeper-mode brokers in migration mode (no topic: what is rehearsed is
a broker's death, not the size), controllers 3001 and 3002 in migration mode, `zk2kraft migrate
--cutover manual --standin ...` with the controllers' properties file as `--controller-config`.
Once both brokers are registered and unfenced in the controllers' log, broker 1 is killed -9.
Checked in controller 3001's own log (read with the writers' log reader): broker 1 fenced at its
epoch within that window, broker 0 still unfenced. Then SIGUSR1 (issue 30): the cutover is
refused, naming broker 1 (not registered with the stand-in, not fetching: its znode went with its
ZooKeeper session, but ZooKeeper listed it when the mirror began), and nothing is fenced; broker 1
is started again, registers and heartbeats, the signal is given again and the run cuts over as
usual (exit 0, status ok, no broker unregistered at the fence).
Needs `tests/kafka/fetch.sh` (fails otherwise).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from tests.support.migration_cluster import kraft_controller_took_over, migration_cluster
from tests.support.ports import free_port
from tests.support.standin import (
    STANDIN,
    STANDIN_FOLLOWERS,
    migrate_through_standin,
    migration_mode_controllers,
)
from writers import open_log_source

pytestmark = [pytest.mark.oracle, pytest.mark.slow]

# broker.session.timeout.ms 5 s, not Kafka's 9 s: the test ZooKeeper caps a session at 10 s
# (tickTime 500), so the killed broker's ZooKeeper registration goes about 10 s after the kill
# and the mirror then unregisters it; fenced at 9 s, that race was lost once in CI under load
SESSION_S, HEARTBEAT_S = 5.0, 2.0  # the controllers' session (read by the stand-in), the
# brokers' heartbeat interval (Kafka's default)
SLACK_S = 4.0  # commit, polling and a loaded 2-core host; below the ZooKeeper expiry
_CONTROLLER_PROPS = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "controller.quorum.election.timeout.ms": "60000",
    "controller.quorum.fetch.timeout.ms": "30000",
    "broker.session.timeout.ms": str(int(SESSION_S * 1000)),
}


def _fencing(meta_dir: Path) -> dict[int, list[tuple[int, int]]]:
    """broker id -> [(epoch, fenced change)] in log order: 0 for its RegisterBrokerRecord, then
    each BrokerRegistrationChangeRecord's `fenced` (-1 unfence, 1 fence), as the log holds them."""
    out: dict[int, list[tuple[int, int]]] = {}
    try:
        for entry in open_log_source(meta_dir).entries():
            for rec in entry.batch.records:
                kind, data = getattr(rec, "type", ""), getattr(rec, "data", {})
                if kind == "REGISTER_BROKER_RECORD":
                    out.setdefault(data["brokerId"], []).append((data["brokerEpoch"], 0))
                elif kind == "BROKER_REGISTRATION_CHANGE_RECORD":
                    out.setdefault(data["brokerId"], []).append(
                        (data["brokerEpoch"], int(data.get("fenced", 0))))
    except Exception:  # noqa: BLE001 - a batch Kafka is writing right now: read again later
        return {}
    return out


def _unfenced_by_heartbeat(changes: list[tuple[int, int]]) -> int | None:
    """The epoch of a broker's own registration if its last change unfenced it."""
    if changes and changes[-1][1] == -1:
        return changes[-1][0]
    return None


class _OutputLines:
    """zk2kraft's stdout and stderr read as they come (a refusal is only said there)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self._lines: list[str] = []
        self._threads = [threading.Thread(target=self._read, args=(stream,), daemon=True)
                         for stream in (proc.stdout, proc.stderr)]
        for t in self._threads:
            t.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self._lines.append(line)

    def has(self, text: str) -> bool:
        return any(text in line for line in list(self._lines))

    def finish(self) -> tuple[str, str]:
        for t in self._threads:
            t.join(30)
        return "".join(self._lines), ""


def _wait(what: str, ready: Any, timeout_s: float, poll_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (got := ready()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll_s)
    return got


def test_a_broker_killed_during_the_mirror_is_fenced_within_its_session_timeout(
    tmp_path: Path, zk_server: Any, zk_chroot_client: KazooClient, zk_chroot: str
) -> None:
    root, connect, zk = tmp_path, f"{zk_server.connect}{zk_chroot}", zk_chroot_client
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    started = time.monotonic()
    with migration_cluster(root, connect, brokers=2, heap="320m", voters=voters) as cluster:
        cluster_id = json.loads(zk.get("/cluster/id")[0])["id"]
        with migration_mode_controllers(root, connect, cluster_id, _CONTROLLER_PROPS,
                                        ports=ports, heap="320m") as (_, nodes):
            meta = nodes[0].metadata_log_dir
            proc = migrate_through_standin(
                connect, ports, root, "--broker-wait", "120",
                "--controller-config", str(nodes[0].config_path), cutover="manual", popen=True)
            try:
                def both_unfenced() -> dict[int, int] | None:
                    assert proc.poll() is None, proc.communicate()
                    got = {b: _unfenced_by_heartbeat(c) for b, c in _fencing(meta).items()}
                    held = {b: e for b, e in got.items() if e is not None}
                    return held if sorted(held) == [0, 1] else None

                epochs = _wait("both brokers registered and unfenced", both_unfenced, 240)
                victim = cluster.brokers[1]
                assert victim.pid is not None
                os.kill(victim.pid, signal.SIGKILL)
                killed = time.monotonic()
                _wait("broker 1 fenced", lambda: (epochs[1], 1) in _fencing(meta).get(1, []),
                      SESSION_S + SLACK_S + 30, poll_s=0.1)
                fenced_after = time.monotonic() - killed
                log = _fencing(meta)
                assert SESSION_S - HEARTBEAT_S - 0.5 <= fenced_after <= SESSION_S + SLACK_S, (
                    fenced_after, log)
                assert log[1][-1] == (epochs[1], 1), log  # fenced once, at its epoch
                assert _unfenced_by_heartbeat(log[0]) == epochs[0], log  # the other is not
                # issue 30: the signal over the dead broker is refused, naming it, and nothing
                # is fenced; once it is back (registered and fetching) the signal is given again
                epoch_before = zk.get("/controller_epoch")[0]
                lines = _OutputLines(proc)
                proc.send_signal(signal.SIGUSR1)
                _wait("the refusal", lambda: lines.has("cutover refused: broker 1 (not "
                                                       "registered with the stand-in"), 60)
                refused_at = time.monotonic()
                assert zk.get("/controller_epoch")[0] == epoch_before  # not fenced
                victim.restart(ready_to_start=lambda: zk.exists("/brokers/ids/1") is None)
                _wait("broker 1 back and unfenced", lambda: (
                    _unfenced_by_heartbeat(_fencing(meta).get(1, [])) or -1) > epochs[1], 120)
                while proc.poll() is None:  # the operator signals again until it is accepted
                    assert time.monotonic() < refused_at + 300, "the cutover was not accepted"
                    proc.send_signal(signal.SIGUSR1)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(5)
                out, err = lines.finish()
            finally:
                if proc.poll() is None:
                    proc.kill()
            said = " ".join((out + err).split())
            assert "cutover refused: broker 1 (not registered with the stand-in" in said, said
            logs = "\n".join(n.log_text() for n in nodes)
            assert proc.returncode == 0, said + logs[-4000:]
            doc = json.loads((root / "m.json").read_text())
            assert (doc["status"], doc["problems"]) == ("ok", []), doc["problems"]
            assert doc["handover"]["new_leader"] in STANDIN_FOLLOWERS
            kraft_controller_took_over(zk, nodes)
            assert "Encountered fatal fault" not in logs
            cluster.brokers[0].assert_running()
            victim.assert_running()
            assert doc["brokers_unregistered_at_fence"] == []
    print(f"\nbroker fenced {fenced_after:.1f} s after kill -9 (session {SESSION_S:g} s); "
          f"test {time.monotonic() - started:.0f} s")
