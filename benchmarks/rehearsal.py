"""Rehearsal benchmark: Kafka's own ZooKeeper migration against zk2kraft's, on the same cluster
shape, with the canary (`migrate._canary`) measuring the window as clients feel it. Prints
figures; it is not a test.

    python benchmarks/rehearsal.py                    # 1,000 partitions
    python benchmarks/rehearsal.py --sizes 1000 10000 --brokers 2

Per size, two fresh clusters of real Kafka 3.9.1 ZooKeeper-mode brokers in migration mode
(`tests/support/migration_cluster.py`), the partitions created through Kafka's admin API
(topics of 100 partitions), and an untouched ZooKeeper tree:

* **Kafka's own**: a KRaft controller 3000 is formatted with the cluster's id and started in
  migration mode, and migrates (claim of `/controller` -> ZK_MIGRATION -> SYNC_KRAFT_TO_ZK ->
  KRAFT_CONTROLLER_TO_BROKER_COMM -> DUAL_WRITE). Figures: claim -> DUAL_WRITE from its log
  (millisecond timestamps), and the canary's observed window (the longest gap between served
  controller requests after the controller's launch) and producer stall.
* **Ours**: `zk2kraft migrate --cutover now --bootstrap-server ...` into the controller's
  `metadata.log.dir`, `--on-cutover` launching the same controller there. Figures: t2 - t0
  (`window_ms.total`), `window_ms.tool`, the canary's observed window and producer stall, and
  the controller's own claim -> DUAL_WRITE.

The controller here starts *after* our fence (the local-voter transport), so its JVM
start and election are inside our window, while Kafka's own migration starts its controller
before its claim. The stand-in transport (`--standin`) removes that; until `migrate` uses it, this
benchmark measures what `migrate` does today.
"""

from __future__ import annotations

import argparse
import json
import os
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

from migrate._canary import Canary  # noqa: E402
from tests.support.kafka import storage_format  # noqa: E402
from tests.support.migration_cluster import (  # noqa: E402
    CONTROLLER_ID,
    dual_write_at,
    migration_cluster,
    migration_controller,
    on_cutover_gate,
    state_times,
)
from tests.support.zk import ZkServer  # noqa: E402


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000])
    p.add_argument("--brokers", type=int, default=2)
    p.add_argument("--heap", default="512m", help="each Kafka JVM's -Xmx")
    p.add_argument("--json", help="write the figures here too")
    p.add_argument("--only", choices=["kafka", "ours"], help="run one side only")
    return p


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


def _durations(states: dict[str, float]) -> dict[str, float | None]:
    def d(a: str, b: str) -> float | None:
        if a in states and b in states:
            return round((states[b] - states[a]) * 1000.0, 1)
        return None

    return {"claim_to_dual_write_ms": d("claim", "DUAL_WRITE"),
            "reconcile_ms": d("SYNC_KRAFT_TO_ZK", "KRAFT_CONTROLLER_TO_BROKER_COMM"),
            "broker_rpcs_ms": d("KRAFT_CONTROLLER_TO_BROKER_COMM", "DUAL_WRITE"),
            "zk_migration_ms": d("ZK_MIGRATION", "SYNC_KRAFT_TO_ZK")}


def kafkas_own(root: Path, connect: str, size: int, brokers: int, heap: str) -> dict[str, Any]:
    """Kafka's own migration of an untouched ZooKeeper-mode cluster, with the canary."""
    with migration_cluster(root, connect, brokers=brokers, heap=heap) as cluster:
        start = time.monotonic()
        _create_partitions(cluster.bootstrap, size)
        print(f"  kafka: {size} partitions created in {time.monotonic() - start:.1f}s",
              flush=True)
        canary = Canary(cluster.bootstrap)
        canary.start()
        canary.warm_up()
        voter = root / f"voter{CONTROLLER_ID}"
        controller = migration_controller(root, cluster, voter, heap=heap)
        storage_format(controller.config_path, _cluster_id(connect))
        try:
            launched = time.monotonic()
            controller.launch()
            dual_write_at(controller, timeout=900)
            if not canary.wait_for_t2(time.monotonic(), 300):
                print("  kafka: WARNING: no canary request served after DUAL_WRITE", flush=True)
            report = canary.stop(launched)
            states = state_times(controller)
        finally:
            controller.stop()
    doc = report.to_json()
    return {**_durations(states), "observed_ms": doc["observed_ms"],
            "observed_gap_after_launch_ms": doc["gap_ms"],
            "producer_stall_ms": doc["producer_stall_ms"], "records": doc["records"],
            "requests": doc["requests"]}


def ours(root: Path, connect: str, size: int, brokers: int, heap: str) -> dict[str, Any]:
    """`zk2kraft migrate --cutover now` with the canary, the controller started on cutover."""
    with migration_cluster(root, connect, brokers=brokers, heap=heap) as cluster:
        start = time.monotonic()
        _create_partitions(cluster.bootstrap, size)
        print(f"  ours: {size} partitions created in {time.monotonic() - start:.1f}s",
              flush=True)
        voter = root / f"voter{CONTROLLER_ID}"
        controller = migration_controller(root, cluster, voter, heap=heap)
        report_path = root / "report.json"
        with on_cutover_gate(root, controller) as command:
            proc = subprocess.run(
                [sys.executable, "-m", "migrate.cli", "migrate", "--zookeeper", connect,
                 "--voter", f"{CONTROLLER_ID}={voter}", "--cutover", "now", "--on-cutover",
                 command, "--bootstrap-server", cluster.bootstrap, "--handoff-timeout", "600",
                 "--json", str(report_path), "--quiet"],
                capture_output=True, text=True, cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)})
            if proc.returncode != 0:
                raise SystemExit(f"zk2kraft migrate exited {proc.returncode}:\n"
                                 f"{proc.stderr[-3000:]}")
            dual_write_at(controller, timeout=900)
            states = state_times(controller)
    doc = json.loads(report_path.read_text())
    w = doc["window_ms"]
    return {"t2_minus_t0_ms": w["total"], "tool_ms": w["tool"], "observed_ms": w["observed"],
            "clients_t2_ms": w["clients_t2"], "producer_stall_ms": w["producer_stall"],
            "controller": _durations(states), "records": doc["canary"]["records"],
            "requests": doc["canary"]["requests"], "phase_ms": doc["phase_ms"]}


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or not b else f"{a / b:.2f}"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-bench-rehearsal-"))
    figures: dict[str, Any] = {"cores": os.cpu_count(), "brokers": args.brokers,
                               "load_avg_start": os.getloadavg(), "sizes": {}}
    server = ZkServer(heap="1g").start()
    try:
        for size in args.sizes:
            print(f"{size} partitions, {args.brokers} ZooKeeper-mode brokers in migration mode",
                  flush=True)
            if args.only == "ours":
                k = {key: None for key in ("claim_to_dual_write_ms", "zk_migration_ms",
                                           "reconcile_ms", "broker_rpcs_ms", "observed_ms",
                                           "producer_stall_ms", "records")}
            else:
                k = kafkas_own(work / f"kafka{size}", _chroot(server.connect, f"/kafka{size}"),
                               size, args.brokers, args.heap)
            print(f"  Kafka's own: claim -> DUAL_WRITE {k['claim_to_dual_write_ms']} ms "
                  f"(copy {k['zk_migration_ms']}, reconcile {k['reconcile_ms']}, broker RPCs "
                  f"{k['broker_rpcs_ms']}); canary observed {k['observed_ms']} ms, producer "
                  f"stall {k['producer_stall_ms']} ms; records {k['records']}", flush=True)
            if args.only == "kafka":
                figures["sizes"][size] = {"kafka": k}
                continue
            o = ours(work / f"ours{size}", _chroot(server.connect, f"/ours{size}"), size,
                     args.brokers, args.heap)
            print(f"  zk2kraft: t2 - t0 {o['t2_minus_t0_ms']} ms (tool {o['tool_ms']} ms; "
                  f"controller claim -> DUAL_WRITE {o['controller']['claim_to_dual_write_ms']} "
                  f"ms); canary observed {o['observed_ms']} ms (first request served "
                  f"{o['clients_t2_ms']} ms after the fence), producer stall "
                  f"{o['producer_stall_ms']} ms; records {o['records']}", flush=True)
            print(f"  ratio ours/Kafka: observed {_ratio(o['observed_ms'], k['observed_ms'])}, "
                  f"t2-t0 vs claim->DUAL_WRITE "
                  f"{_ratio(o['t2_minus_t0_ms'], k['claim_to_dual_write_ms'])}", flush=True)
            figures["sizes"][size] = {"kafka": k, "ours": o}
        figures["load_avg_end"] = os.getloadavg()
        print(f"load average at start {figures['load_avg_start']}, at end "
              f"{figures['load_avg_end']} on {figures['cores']} cores", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
