"""Rehearsal benchmark: Kafka's own ZooKeeper migration against zk2kraft's stand-in handoff, on
the same cluster shape, with the canary (`migrate.online.canary`) measuring the window as clients
feel it. Prints figures; it is not a test.

    python benchmarks/rehearsal.py                          # 1,000 partitions, one run
    python benchmarks/rehearsal.py --sizes 1000 10000 --runs 3
    python benchmarks/rehearsal.py --transport voter        # the local-voter variant
    python benchmarks/rehearsal.py --keep                   # keep every node's logs
    python benchmarks/rehearsal.py --no-floor               # without the floor (faster)
    python benchmarks/rehearsal.py --controller-jvm-flag=-XX:TieredStopAtLevel=1   # C1 only

Per size and run, two fresh clusters of real Kafka 3.9.1 ZooKeeper-mode brokers in migration mode
(`tests/support/migration_cluster.py`, `--brokers` of them, 2 by default), the partitions created
through Kafka's admin API (topics of 100 partitions, replication factor 1), an untouched
ZooKeeper tree and the canary against the brokers:

* **Kafka's own**: a KRaft controller 3000 is formatted with the cluster's id and started in
  migration mode, and migrates (claim of `/controller` -> ZK_MIGRATION -> SYNC_KRAFT_TO_ZK ->
  KRAFT_CONTROLLER_TO_BROKER_COMM -> DUAL_WRITE). Figures: claim -> DUAL_WRITE from its log
  (millisecond timestamps), and the canary's observed window (the longest gap between served
  controller requests after the controller's launch) and producer stall.
* **The floor** (on by default, `--no-floor` skips it): Kafka's own controller is then restarted
  on its migrated log (a new JVM that never ran Kafka's ZooKeeper read path, the only
  controller, nothing else loading the image), with a second canary across the restart: that
  failover's observed window, claim -> DUAL_WRITE and reconcile are what any controller change
  on a migrated cluster costs under the same client load, and so the floor for a handover to a
  real controller. Every reconcile is split into its wait on the migration driver's queue and
  the sync itself ("Performing a full metadata sync" -> KRAFT_CONTROLLER_TO_BROKER_COMM).
* **Ours, through the stand-in** (default): the brokers' `controller.quorum.voters` names 3000,
  3001 and 3002; real controllers 3001 and 3002 run in migration mode before zk2kraft starts
  (long election timeout, `tests/support/standin.py`); `zk2kraft migrate --cutover now
  --standin 3000@...=DIR --controller 3001@... --controller 3002@... --bootstrap-server ...
  --controller-log ...` leads them as voter 3000, pre-copies and mirrors through Kafka's Raft,
  fences, drains, resigns, and a warm controller takes over. Figures, from its `--json` report:
  t2 - t0 (`window_ms.total`), `window_ms.tool` (fence -> drain committed on the quorum), the
  election (EndQuorumEpoch -> the new leader's BeginQuorumEpoch, `window_ms.parts.election`),
  the other parts (/migration write, Kafka's claim, reconcile and broker RPCs from the new
  leader's log), the canary's observed window and producer stall; and the new leader's own
  claim -> DUAL_WRITE from its log.
* **Ours, local voter** (`--transport voter`): `migrate --voter 3000=DIR --on-cutover ...`
  writes the controller's directory and starts that controller after the fence, so its JVM
  start and election are inside our window (the variant measured before the stand-in existed).

`--controller-jvm-flag` adds a flag to every KRaft controller's JVM on both sides (the brokers
keep theirs): with `-XX:TieredStopAtLevel=1` a cold controller no longer spends seconds of CPU in
the C2 compiler during its reconcile (docs/design/window.md, "Why the reconcile is longer after our
handover").

Targets (issue 9): observed window <= 0.5x Kafka's at 10,000 partitions and a ratio that falls
as the cluster grows; our own part (tool + election) <= 200 ms at both sizes. Each side's load
averages (as `uptime` prints them) are recorded beside its figures: the host is shared, and every
figure moves with its load. The two sides alternate which runs first, run by run (Kafka's first
in odd runs, ours with `--ours-first`), so a load that drifts during a benchmark cannot favour
one side.

Every run prints one table: Kafka's own migration, ours and the floor side by side (the canary's
observed window, claim -> DUAL_WRITE with Kafka's reconcile and broker RPCs, and our parts: t2 -
t0, tool, /migration, election), the 1-minute load average around each side, and the ratios.
Figures from runs, with their dates and loads: docs/benchmarks.md
("Rehearsal against Kafka's own migration").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from kazoo.client import KazooClient  # noqa: E402

from migrate.online.canary import Canary  # noqa: E402
from tests.support.kafka import KafkaController, storage_format  # noqa: E402
from tests.support.migration_cluster import (  # noqa: E402
    CONTROLLER_ID,
    dual_write_at,
    log_ts,
    migration_cluster,
    migration_controller,
    on_cutover_gate,
    state_times,
)
from tests.support.ports import free_port  # noqa: E402
from tests.support.standin import (  # noqa: E402
    STANDIN,
    STANDIN_FOLLOWERS,
    migrate_through_standin,
    migration_mode_controllers,
)
from tests.support.zk import ZkServer  # noqa: E402

# the controllers following the stand-in: a long election timeout, so that zk2kraft (which
# first warms the canary up and reads ZooKeeper) still wins the first election at 10,000
# partitions on a loaded host; the handover itself does not wait for it (EndQuorumEpoch)
_STANDIN_CONTROLLER_PROPS = {
    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
    "controller.quorum.election.timeout.ms": "120000",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000])
    p.add_argument("--runs", type=int, default=1, help="repetitions per size (fresh clusters)")
    p.add_argument("--brokers", type=int, default=2)
    p.add_argument("--heap", default="512m", help="each Kafka JVM's -Xmx")
    p.add_argument("--transport", choices=["standin", "voter"], default="standin",
                   help="ours through the stand-in (default) or local voter directories")
    p.add_argument("--handoff-timeout", type=float, default=600.0,
                   help="zk2kraft's --handoff-timeout (seconds)")
    p.add_argument("--json", help="write the figures here too")
    p.add_argument("--only", choices=["kafka", "ours"], help="run one side only")
    p.add_argument("--controller-jvm-flag", action="append", default=[], metavar="FLAG",
                   help="add FLAG to every KRaft controller's JVM on both sides, brokers "
                        "unchanged (repeatable; write --controller-jvm-flag=-XX:...)")
    p.add_argument("--no-floor", dest="kafka_restart", action="store_false",
                   help="skip the floor: by default, after Kafka's own migration reaches "
                        "DUAL_WRITE its controller is restarted (a new JVM on the same migrated "
                        "log) and that failover's window and reconcile are timed")
    p.add_argument("--kafka-restart", dest="kafka_restart", action="store_true",
                   help=argparse.SUPPRESS)  # the floor's older name; it is on by default now
    p.add_argument("--ours-first", action="store_true",
                   help="our side first in odd runs (Kafka's goes first in odd runs otherwise)")
    p.add_argument("--keep", action="store_true",
                   help="keep the work directory (every node's logs, zk2kraft's --json report "
                        "and journal; ~300 MB a run at 10,000 partitions); removed by default")
    return p


def _uptime() -> str:
    """The load averages as `uptime` prints them."""
    return "load average: " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _create_partitions(bootstrap: str, partitions: int) -> None:
    """Topics of 100 partitions; the brokers answer once ZooKeeper holds them (timeout 0), then
    wait until every partition has a leader (a ZooKeeper controller under load can take minutes
    to send the LeaderAndIsr requests, longer than one CreateTopics request may wait)."""
    from confluent_kafka import KafkaError, KafkaException

    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 300000})
    names: list[str] = []
    left, i = partitions, 0
    while left > 0:
        batch = []
        for _ in range(10):
            if left <= 0:
                break
            n = min(100, left)
            batch.append(NewTopic(f"bench-{i}", num_partitions=n, replication_factor=1))
            names.append(f"bench-{i}")
            left -= n
            i += 1
        for f in admin.create_topics(batch, operation_timeout=0, request_timeout=300).values():
            try:
                f.result(600)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        meta = admin.list_topics(timeout=120)
        led = sum(1 for t in names if t in meta.topics
                  for p in meta.topics[t].partitions.values() if p.leader >= 0)
        if led >= partitions:
            return
        time.sleep(2)  # the ZooKeeper controller is still electing the new partitions' leaders
    raise SystemExit(f"only {led} of {partitions} partitions have a leader after 30 min")


def _cluster_id(connect: str) -> str:
    zk = KazooClient(hosts=connect, timeout=30)
    zk.start(timeout=30)
    try:
        data, _ = zk.get("/cluster/id")
    finally:
        zk.stop()
        zk.close()
    return str(json.loads(data)["id"])


def _chroot(base: str, name: str) -> str:
    zk = KazooClient(hosts=base, timeout=30)
    zk.start(timeout=30)
    zk.ensure_path(name)
    zk.stop()
    zk.close()
    return f"{base}{name}"


def _marks(controller: KafkaController) -> dict[str, float]:
    """`state_times`, plus "sync_start": Kafka 3.9's "Performing a full metadata sync from KRaft
    to ZK" line. Entering SYNC_KRAFT_TO_ZK only queues the sync on the migration driver's event
    queue, behind whatever that queue holds, so the reconcile splits into that wait and the sync
    itself (which ends with the move to KRAFT_CONTROLLER_TO_BROKER_COMM)."""
    marks = state_times(controller)
    for line in controller.log_text().splitlines():
        ts = log_ts(line)
        if (ts is not None and ts >= marks.get("SYNC_KRAFT_TO_ZK", float("inf"))
                and "Performing a full metadata sync from KRaft to ZK" in line):
            marks["sync_start"] = ts
            break
    return marks


def _durations(states: dict[str, float]) -> dict[str, float | None]:
    def d(a: str, b: str) -> float | None:
        if a in states and b in states:
            return round((states[b] - states[a]) * 1000.0, 1)
        return None

    return {"claim_to_dual_write_ms": d("claim", "DUAL_WRITE"),
            "reconcile_ms": d("SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM"),
            "reconcile_wait_ms": d("SYNC_KRAFT_TO_ZK", "sync_start"),
            "reconcile_sync_ms": d("sync_start", "KRAFT_CONTROLLER_TO_BROKER_COMM"),
            "broker_rpcs_ms": d("KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE"),
            "zk_migration_ms": d("ZK_MIGRATION", "SYNC_KRAFT_TO_ZK")}


def _created(side: str, bootstrap: str, size: int) -> None:
    start = time.monotonic()
    _create_partitions(bootstrap, size)
    print(f"  {side}: {size} partitions created in {time.monotonic() - start:.1f}s "
          f"({_uptime()})", flush=True)


def kafkas_own(root: Path, connect: str, size: int, brokers: int, heap: str,
               restart: bool = False, jvm_flags: list[str] | None = None) -> dict[str, Any]:
    """Kafka's own migration of an untouched ZooKeeper-mode cluster, with the canary; with
    `restart`, then its controller restarted on the same log (a JVM that has not run Kafka's
    ZooKeeper code yet, alone in the quorum) and that controller's reconcile timed too."""
    with migration_cluster(root, connect, brokers=brokers, heap=heap) as cluster:
        _created("kafka", cluster.bootstrap, size)
        canary = Canary(cluster.bootstrap)
        canary.start()
        canary.warm_up()
        voter = root / f"voter{CONTROLLER_ID}"
        controller = migration_controller(root, cluster, voter, heap=heap)
        controller.jvm_flags = list(jvm_flags or [])
        storage_format(controller.config_path, _cluster_id(connect))
        load_before = os.getloadavg()
        try:
            launched = time.monotonic()
            controller.launch()
            dual_write_at(controller, timeout=900)
            if not canary.wait_for_t2(time.monotonic(), 300):
                print("  kafka: WARNING: no canary request served after DUAL_WRITE", flush=True)
            report = canary.stop(launched)
            states = _marks(controller)
            load_after = os.getloadavg()
            again: dict[str, Any] = {}
            if restart:
                again = _restarted(controller, cluster.bootstrap)
        finally:
            controller.stop()
    doc = report.to_json()
    return {**_durations(states), "observed_ms": doc["observed_ms"],
            "observed_gap_after_launch_ms": doc["gap_ms"],
            "producer_stall_ms": doc["producer_stall_ms"], "records": doc["records"],
            "requests": doc["requests"], "load_before": load_before,
            "load_after": load_after, "restarted": again or None}


def _restarted(controller: KafkaController, bootstrap: str) -> dict[str, Any]:
    """Restart Kafka's own controller once it is in DUAL_WRITE (SIGTERM; the old log kept as
    server.log.1) and time the new JVM's reconcile, with a second canary running throughout:
    the clients' load on the host is then what it is around our handover's reconcile (with the
    canary stopped, a restarted controller had a whole core to itself)."""
    canary = Canary(bootstrap)
    canary.start()
    canary.warm_up()
    load_before = os.getloadavg()
    stopped = time.monotonic()
    controller.restart()
    dual_write_at(controller, timeout=900)
    if not canary.wait_for_t2(time.monotonic(), 300):
        print("  kafka: WARNING: no canary request served after the restart", flush=True)
    doc = canary.stop(stopped).to_json()
    return {**_durations(_marks(controller)), "observed_ms": doc["observed_ms"],
            "load_before": load_before, "load_after": os.getloadavg()}


def _ours_figures(doc: dict[str, Any]) -> dict[str, Any]:
    """The figures the summary prints, from `migrate --json`."""
    w = doc["window_ms"]
    parts = {name: part.get("ms") for name, part in (w.get("parts") or {}).items()}
    tool, election = w.get("tool"), parts.get("election")
    return {"t2_minus_t0_ms": w["total"], "tool_ms": tool, "election_ms": election,
            "own_part_ms": None if tool is None or election is None else tool + election,
            "parts_ms": parts, "observed_ms": w.get("observed"),
            "clients_t2_ms": w.get("clients_t2"), "producer_stall_ms": w.get("producer_stall"),
            "records": doc["canary"]["records"], "requests": doc["canary"]["requests"],
            "phase_ms": doc["phase_ms"], "migration_znode_ms": doc.get("migration_znode_ms"),
            "handover": doc.get("handover")}


def ours_standin(root: Path, connect: str, size: int, brokers: int, heap: str,
                 handoff_timeout: float, jvm_flags: list[str] | None = None) -> dict[str, Any]:
    """`zk2kraft migrate --cutover now --standin ...` leading warm controllers 3001 and 3002,
    with the canary."""
    ports = {n: free_port() for n in (STANDIN, *STANDIN_FOLLOWERS)}
    voters = ",".join(f"{n}@127.0.0.1:{p}" for n, p in sorted(ports.items()))
    with migration_cluster(root, connect, brokers=brokers, heap=heap, voters=voters) as cluster:
        _created("ours", cluster.bootstrap, size)
        with migration_mode_controllers(root, connect, _cluster_id(connect),
                                        _STANDIN_CONTROLLER_PROPS, ports=ports, heap=heap,
                                        jvm_flags=jvm_flags or []) as (_, nodes):
            logs = [f"--controller-log={n.server_log}" for n in nodes]
            load_before = os.getloadavg()
            proc = migrate_through_standin(
                connect, ports, root, "--bootstrap-server", cluster.bootstrap,
                "--handoff-timeout", f"{handoff_timeout:g}", "--quiet", *logs, popen=True)
            try:
                out, err = proc.communicate(timeout=handoff_timeout * 2 + 1800)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                raise SystemExit(f"zk2kraft migrate did not finish:\n{err[-3000:]}") from None
            load_after = os.getloadavg()
            if proc.returncode != 0:
                tail = "\n".join(n.log_text()[-2000:] for n in nodes)
                raise SystemExit(f"zk2kraft migrate exited {proc.returncode}:\n{out[-2000:]}\n"
                                 f"{err[-3000:]}\ncontrollers:\n{tail}")
            doc = json.loads((root / "m.json").read_text())
            leader_id = (doc.get("handover") or {}).get("new_leader")
            leader = next((n for n in nodes if n.node_id == leader_id), None)
            controller: dict[str, float | None] = {}
            election: dict[str, float | None] = {}
            if leader is not None:
                dual_write_at(leader, timeout=900)
                controller = _durations(_marks(leader))
                election = _election_steps(doc)
    return {**_ours_figures(doc), "controller": controller, "election_steps_ms": election,
            "load_before": load_before, "load_after": load_after}


def _election_steps(doc: dict[str, Any]) -> dict[str, float | None]:
    """Where the election part went: `window_ms.parts.election.parts`, which zk2kraft splits
    with the new leader's log (`--controller-log`) and its own wall-clock stamps of every
    EndQuorumEpoch, Vote and BeginQuorumEpoch; empty (the reason printed) when it could not."""
    election = (doc["window_ms"].get("parts") or {}).get("election") or {}
    if not election.get("parts"):
        print(f"  election not split: {election.get('parts_reason')}")
        return {}
    return {name: part["ms"] for name, part in election["parts"].items()}


def ours_local_voter(root: Path, connect: str, size: int, brokers: int, heap: str,
                     handoff_timeout: float, jvm_flags: list[str] | None = None
                     ) -> dict[str, Any]:
    """`zk2kraft migrate --cutover now --voter ...` with the canary, the controller started by
    `--on-cutover` on the directory zk2kraft wrote."""
    with migration_cluster(root, connect, brokers=brokers, heap=heap) as cluster:
        _created("ours", cluster.bootstrap, size)
        voter = root / f"voter{CONTROLLER_ID}"
        controller = migration_controller(root, cluster, voter, heap=heap)
        controller.jvm_flags = list(jvm_flags or [])
        report_path = root / "report.json"
        load_before = os.getloadavg()
        with on_cutover_gate(root, controller) as command:
            proc = subprocess.run(
                [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
                 "--voter", f"{CONTROLLER_ID}={voter}", "--cutover", "now", "--on-cutover",
                 command, "--bootstrap-server", cluster.bootstrap, "--handoff-timeout",
                 f"{handoff_timeout:g}", "--controller-log", str(controller.server_log),
                 "--json", str(report_path), "--quiet"],
                capture_output=True, text=True, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            load_after = os.getloadavg()
            if proc.returncode != 0:
                raise SystemExit(f"zk2kraft migrate exited {proc.returncode}:\n"
                                 f"{proc.stderr[-3000:]}")
            dual_write_at(controller, timeout=900)
            states = state_times(controller)
    doc = json.loads(report_path.read_text())
    return {**_ours_figures(doc), "controller": _durations(states), "load_before": load_before,
            "load_after": load_after}


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else round(a / b, 3)


def _fmt(v: float | None, unit: str = " ms") -> str:
    return "n/a" if v is None else f"{v:,.1f}{unit}"


def _fmt_ratio(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _load(v: Any) -> str:
    return "n/a" if v is None else "/".join(f"{x:.1f}" for x in v)


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(statistics.median(got), 3) if got else None


def _print_run(size: int, run: int, k: dict[str, Any] | None,
               o: dict[str, Any] | None) -> None:
    if k is not None:
        print(f"  [{size} partitions, run {run}] Kafka's own: claim -> DUAL_WRITE "
              f"{_fmt(k['claim_to_dual_write_ms'])} (copy {_fmt(k['zk_migration_ms'])}, "
              f"reconcile {_fmt(k['reconcile_ms'])} (queued {_fmt(k['reconcile_wait_ms'])}, "
              f"sync {_fmt(k['reconcile_sync_ms'])}), broker RPCs "
              f"{_fmt(k['broker_rpcs_ms'])}); "
              f"canary observed {_fmt(k['observed_ms'])}, producer stall "
              f"{_fmt(k['producer_stall_ms'])}; records "
              f"{k['records']}; load {_load(k.get('load_before'))} -> "
              f"{_load(k.get('load_after'))}", flush=True)
        r = k.get("restarted")
        if r:
            print(f"  [{size} partitions, run {run}] Kafka's controller restarted: claim -> "
                  f"DUAL_WRITE {_fmt(r['claim_to_dual_write_ms'])}, reconcile "
                  f"{_fmt(r['reconcile_ms'])} (queued {_fmt(r['reconcile_wait_ms'])}, sync "
                  f"{_fmt(r['reconcile_sync_ms'])}), broker RPCs {_fmt(r['broker_rpcs_ms'])}; "
                  f"canary observed {_fmt(r['observed_ms'])}; load {_load(r['load_before'])} "
                  f"-> {_load(r['load_after'])}", flush=True)
    if o is None:
        return
    parts = ", ".join(f"{name} {_fmt(ms)}" for name, ms in o["parts_ms"].items())
    print(f"  [{size} partitions, run {run}] zk2kraft: t2 - t0 {_fmt(o['t2_minus_t0_ms'])}, tool "
          f"{_fmt(o['tool_ms'])}, election {_fmt(o['election_ms'])}, own part (tool + "
          f"election) {_fmt(o['own_part_ms'])}; parts: {parts}; new leader's claim -> "
          f"DUAL_WRITE {_fmt(o['controller'].get('claim_to_dual_write_ms'))} (reconcile "
          f"{_fmt(o['controller'].get('reconcile_ms'))}: queued "
          f"{_fmt(o['controller'].get('reconcile_wait_ms'))}, sync "
          f"{_fmt(o['controller'].get('reconcile_sync_ms'))}); canary observed "
          f"{_fmt(o['observed_ms'])} (first request served {_fmt(o['clients_t2_ms'])} after the "
          f"fence), producer stall {_fmt(o['producer_stall_ms'])}; records {o['records']}; load "
          f"{_load(o.get('load_before'))} -> {_load(o.get('load_after'))}", flush=True)
    if o.get("election_steps_ms"):
        print(f"  [{size} partitions, run {run}] election, step by step (ms): "
              + ", ".join(f"{name} {_fmt(v, '')}" for name, v in o["election_steps_ms"].items()),
              flush=True)
    if k is None:
        return
    print(f"  [{size} partitions, run {run}] ratio ours/Kafka's observed "
          f"{_fmt_ratio(_ratio(o['observed_ms'], k['observed_ms']))}; t2 - t0 against claim -> "
          f"DUAL_WRITE {_fmt_ratio(_ratio(o['t2_minus_t0_ms'], k['claim_to_dual_write_ms']))}",
          flush=True)


_NOT_THEIRS = "-"  # a figure of our handover only: no counterpart on Kafka's side


def _table_rows(k: dict[str, Any] | None, o: dict[str, Any] | None
                ) -> list[tuple[str, float | str | None, float | None, float | str | None]]:
    """(figure, Kafka's own migration, ours, the floor) for one run: ms, None where not
    measured, `_NOT_THEIRS` where the figure has no counterpart on that side."""
    f = (k or {}).get("restarted") or {}
    kk = k or {}
    oo = o or {}
    ctl = oo.get("controller") or {}
    parts = oo.get("parts_ms") or {}
    return [
        ("canary observed window", kk.get("observed_ms"), oo.get("observed_ms"),
         f.get("observed_ms")),
        ("claim -> DUAL_WRITE", kk.get("claim_to_dual_write_ms"),
         ctl.get("claim_to_dual_write_ms"), f.get("claim_to_dual_write_ms")),
        ("  Kafka's reconcile", kk.get("reconcile_ms"), ctl.get("reconcile_ms"),
         f.get("reconcile_ms")),
        ("  broker RPCs", kk.get("broker_rpcs_ms"), ctl.get("broker_rpcs_ms"),
         f.get("broker_rpcs_ms")),
        ("ours: t2 - t0", _NOT_THEIRS, oo.get("t2_minus_t0_ms"), _NOT_THEIRS),
        ("  tool (fence -> drained)", _NOT_THEIRS, oo.get("tool_ms"), _NOT_THEIRS),
        ("  /migration written + journaled", _NOT_THEIRS, parts.get("migration_znode"),
         _NOT_THEIRS),
        ("  election", _NOT_THEIRS, oo.get("election_ms"), _NOT_THEIRS),
        ("  our part (tool + election)", _NOT_THEIRS, oo.get("own_part_ms"), _NOT_THEIRS),
        ("  Kafka's claim after the election", _NOT_THEIRS, parts.get("kafka_claim"),
         _NOT_THEIRS),
    ]


def _print_table(size: int, run: int, k: dict[str, Any] | None,
                 o: dict[str, Any] | None) -> None:
    """One table per run: Kafka's own migration, ours, and the floor (Kafka's own controller
    failover on its migrated log: the same reconcile in a cold JVM, which no handover avoids)."""
    f = (k or {}).get("restarted")
    print(f"\n  [{size} partitions, run {run}] (ms){'':<19}{'Kafka own':>12}{'ours':>12}"
          f"{'floor':>12}", flush=True)
    def cell(v: float | str | None) -> str:
        return v if isinstance(v, str) else _fmt(v, "")

    for name, a, b, c in _table_rows(k, o):
        print(f"  {name:<42}{cell(a):>12}{cell(b):>12}{cell(c):>12}", flush=True)
    def load(side: dict[str, Any] | None) -> str:
        if not side or side.get("load_before") is None:
            return "n/a"
        return f"{side['load_before'][0]:.1f} -> {side['load_after'][0]:.1f}"

    print(f"  1-minute load average before -> after: Kafka own {load(k)}, ours {load(o)}, "
          f"floor {load(f)}", flush=True)
    if k is not None and o is not None:
        vs_kafka = _fmt_ratio(_ratio(o["observed_ms"], k["observed_ms"]))
        vs_floor = _fmt_ratio(_ratio(o["observed_ms"], f["observed_ms"])) if f else "n/a"
        print(f"  observed window ours/Kafka's own {vs_kafka}, ours/floor {vs_floor}",
              flush=True)


def _summary(sizes: dict[int, list[dict[str, Any]]]) -> dict[int, dict[str, float | None]]:
    """Medians per size, the table, and the targets against them."""
    out: dict[int, dict[str, float | None]] = {}
    print("\nmedians per size (runs: ours/Kafka's ratio is per run, then its median):")
    print(f"{'size':>7} {'runs':>4} {'K claim->DW':>12} {'K observed':>11} {'our t2-t0':>10} "
          f"{'tool':>7} {'election':>9} {'own part':>9} {'observed':>9} {'ratio':>6}")
    for size, runs in sizes.items():
        both = [r for r in runs if "ours" in r and "kafka" in r]
        m = {
            "kafka_claim_to_dual_write_ms":
                _median([r["kafka"]["claim_to_dual_write_ms"] for r in runs if "kafka" in r]),
            "kafka_observed_ms": _median([r["kafka"]["observed_ms"] for r in runs
                                          if "kafka" in r]),
            "ours_total_ms": _median([r["ours"]["t2_minus_t0_ms"] for r in runs if "ours" in r]),
            "ours_tool_ms": _median([r["ours"]["tool_ms"] for r in runs if "ours" in r]),
            "ours_election_ms": _median([r["ours"]["election_ms"] for r in runs if "ours" in r]),
            "ours_own_part_ms": _median([r["ours"]["own_part_ms"] for r in runs if "ours" in r]),
            "ours_observed_ms": _median([r["ours"]["observed_ms"] for r in runs if "ours" in r]),
            "observed_ratio": _median([_ratio(r["ours"]["observed_ms"], r["kafka"]["observed_ms"])
                                       for r in both]),
            "own_part_max_ms": max((r["ours"]["own_part_ms"] for r in runs if "ours" in r
                                    and r["ours"]["own_part_ms"] is not None), default=None),
        }
        out[size] = m
        print(f"{size:>7} {len(runs):>4} {_fmt(m['kafka_claim_to_dual_write_ms'], ''):>12} "
              f"{_fmt(m['kafka_observed_ms'], ''):>11} {_fmt(m['ours_total_ms'], ''):>10} "
              f"{_fmt(m['ours_tool_ms'], ''):>7} {_fmt(m['ours_election_ms'], ''):>9} "
              f"{_fmt(m['ours_own_part_ms'], ''):>9} {_fmt(m['ours_observed_ms'], ''):>9} "
              f"{_fmt_ratio(m['observed_ratio']):>6}")
    ratios = [(s, m["observed_ratio"]) for s, m in sorted(out.items())
              if m["observed_ratio"] is not None]
    if len(ratios) >= 2:
        falls = all(b[1] < a[1] for a, b in zip(ratios, ratios[1:], strict=False))
        print(f"observed ratio as the cluster grows: "
              f"{' -> '.join(f'{r:.2f} at {s}' for s, r in ratios)}: "
              f"{'falls' if falls else 'does NOT fall'}")
    if 10000 in out and out[10000]["observed_ratio"] is not None:
        r = out[10000]["observed_ratio"]
        print(f"target observed <= 0.5x Kafka's at 10,000 partitions: {r:.2f}x, "
              f"{'met' if r <= 0.5 else 'NOT met'}")
    for size, m in sorted(out.items()):
        worst = m["own_part_max_ms"]
        if worst is not None:
            print(f"target own part (tool + election) <= 200 ms at {size}: worst run "
                  f"{worst:.1f} ms, {'met' if worst <= 200 else 'NOT met'}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-bench-rehearsal-"))
    figures: dict[str, Any] = {"cores": os.cpu_count(), "brokers": args.brokers,
                               "transport": args.transport, "load_avg_start": os.getloadavg(),
                               "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                               "sizes": {}}
    figures["controller_jvm_flags"] = args.controller_jvm_flag
    print(f"{figures['started']}, {os.cpu_count()} cores, {_uptime()}; ours through "
          f"{args.transport}; controllers' extra JVM flags: "
          f"{' '.join(args.controller_jvm_flag) or 'none'}", flush=True)
    ours = ours_standin if args.transport == "standin" else ours_local_voter
    server = ZkServer(heap="1g").start()
    try:
        for size in args.sizes:
            runs: list[dict[str, Any]] = figures["sizes"].setdefault(size, [])
            for run in range(1, args.runs + 1):
                print(f"{size} partitions, run {run}/{args.runs}: {args.brokers} ZooKeeper-mode "
                      f"brokers in migration mode ({_uptime()})", flush=True)
                one: dict[str, Any] = {}

                def kafka_side(run: int = run, size: int = size, one: dict[str, Any] = one) -> None:
                    one["kafka"] = kafkas_own(
                        work / f"kafka{size}-{run}",
                        _chroot(server.connect, f"/kafka{size}-{run}"), size, args.brokers,
                        args.heap, args.kafka_restart, args.controller_jvm_flag)

                def ours_side(run: int = run, size: int = size, one: dict[str, Any] = one) -> None:
                    one["ours"] = ours(work / f"ours{size}-{run}",
                                       _chroot(server.connect, f"/ours{size}-{run}"), size,
                                       args.brokers, args.heap, args.handoff_timeout,
                                       args.controller_jvm_flag)

                # The sides alternate which goes first, run by run, so a load that drifts over
                # the run cannot favour one side; the order is recorded with the run.
                sides = [("kafka", kafka_side), ("ours", ours_side)]
                if (run % 2 == 0) != args.ours_first:
                    sides.reverse()
                one["order"] = [name for name, _ in sides if args.only in (None, name)]
                for name, side in sides:
                    if args.only in (None, name):
                        side()
                runs.append(one)
                _print_run(size, run, one.get("kafka"), one.get("ours"))
                _print_table(size, run, one.get("kafka"), one.get("ours"))
                if args.json:  # after every run: a later failure keeps what was measured
                    Path(args.json).write_text(json.dumps(figures, indent=2))
        figures["summary"] = _summary(figures["sizes"])
        figures["load_avg_end"] = os.getloadavg()
        print(f"load average at start {_load(figures['load_avg_start'])}, at end "
              f"{_load(figures['load_avg_end'])} on {figures['cores']} cores", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2))
    finally:
        server.stop()
        if args.keep:
            print(f"work directory kept: {work}", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
