"""Fleet benchmark: `plan --fleet`'s Spark job against the same judgement run cluster after
cluster in-process, over real ZooKeepers behind Toxiproxy latency. Prints figures; not a test.

    python benchmarks/fleet.py                                  # 20 clusters, 1k..20k partitions
    python benchmarks/fleet.py --clusters 8 --max-partitions 5000   # quicker

Setup: --zookeepers ZooKeeper processes (one a cluster by default); --clusters sample Kafka
trees (`samples`, 10 partitions a topic, sizes evenly spaced from --min-partitions to
--max-partitions; every fifth a topic without an id, which blocks, and every fourth another a
topic pending deletion, a warning), spread over the servers round-robin, each in its own chroot;
one Toxiproxy proxy a cluster
(scripts/install-toxiproxy.sh builds the server) with a latency toxic on both streams: 1 ms each
way for 2 ms RTT, 10 ms for 20 ms RTT (the kernel here has no netem; our code never sleeps).

For each RTT, interleaved so load drift favours neither: (a) `job.run_fleet_in_process`, every
cluster one after another in this process; (s) `job.run_fleet` on one Spark session (started
once, its cold start printed apart; master `job.fleet_master("local[*]")`). Both run the same task
function, `plan`'s own read + judgement. Printed: wall seconds of each, a/s (the target is >= 3
at 20 ms RTT on 2 cores), each task's peak memory (VmHWM of its Python worker, reset at the
task's start) and the driver's (this process; the Spark driver JVM).

Then, at the last RTT, the acceptance check: `zk2kraft plan --fleet FILE --json --html` run as
an operator runs it (its own Spark session), and `zk2kraft plan --zookeeper ... --json -` run on
every cluster alone (four at a time); every cluster's row must carry exactly what `plan` says of
it alone, and the fleet's exit code must be what its rows call for. Printed: the command's wall
time and its exit code; a difference ends the benchmark with exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migrate.bulk.spark_start import SparkStarter  # noqa: E402
from migrate.cli.plan import plan_result  # noqa: E402
from migrate.fleet.file import FleetCluster  # noqa: E402
from migrate.fleet.job import (  # noqa: E402
    FleetResult,
    fleet_master,
    peak_rss_bytes,
    reset_peak_rss,
    run_fleet,
    run_fleet_in_process,
)
from samples import SampleSpec, generate_sample_cluster  # noqa: E402
from tests.support.toxiproxy import Toxiproxy  # noqa: E402
from tests.support.zk import ZkServer, client_in_new_chroot  # noqa: E402
from writers import LATEST_PRODUCTION  # noqa: E402
from zkreader import ConnectOptions  # noqa: E402

MB = 1024 * 1024


def _sizes(count: int, low: int, high: int) -> list[int]:
    if count == 1:
        return [high]
    return [round(low + (high - low) * i / (count - 1), -1) for i in range(count)]


def _mb(value: object) -> str:
    return "-" if not isinstance(value, int) else f"{value / MB:.0f}"


def _check_same(a: FleetResult, s: FleetResult) -> None:
    """Both engines must judge every cluster alike (the benchmark measures one judgement)."""
    keys = ("status", "blockers", "warnings", "records", "partitions")
    for ra, rs in zip(a.rows, s.rows, strict=True):
        if any(ra[k] != rs[k] for k in keys):
            raise SystemExit(f"fleet: {ra['name']} judged differently in-process and on Spark")


PLAN_KEYS = ("blockers", "warnings", "records", "brokers", "topics", "partitions")


def _zk2kraft(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "migrate.cli", *args], capture_output=True,
                          text=True, timeout=1800, stdin=subprocess.DEVNULL, cwd=ROOT)


def _accept(clusters: list[FleetCluster]) -> bool:
    """`plan --fleet` through the CLI against `plan` on each cluster alone (module docstring)."""
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        fleet_file, out = Path(tmp) / "fleet.txt", Path(tmp) / "fleet.json"
        fleet_file.write_text("".join(f"{c.name} {c.connect.connect}\n" for c in clusters),
                              encoding="utf-8")
        t0 = time.perf_counter()
        fleet = _zk2kraft("plan", "--fleet", str(fleet_file), "--json", str(out),
                          "--html", str(Path(tmp) / "fleet.html"), "--quiet")
        wall = time.perf_counter() - t0
        with ThreadPoolExecutor(4) as pool:
            alone = list(pool.map(lambda c: _zk2kraft(
                "plan", "--zookeeper", c.connect.connect, "--json", "-", "--quiet"), clusters))
        if not out.exists():
            print(f"acceptance: plan --fleet wrote no report (exit {fleet.returncode}): "
                  f"{fleet.stderr.strip()[-2000:]}", flush=True)
            return False
        rows = json.loads(out.read_text(encoding="utf-8"))["clusters"]
    same = 0
    for cluster, row, proc in zip(clusters, rows, alone, strict=True):
        expected = json.loads(proc.stdout) if proc.returncode in (0, 1) else None
        if row["name"] == cluster.name and expected is not None and all(
                row[k] == expected[k] for k in PLAN_KEYS):
            same += 1
        else:
            print(f"acceptance: {cluster.name} differs from plan alone (exit "
                  f"{proc.returncode}): {proc.stderr.strip()[-500:]}", flush=True)
    want = 1 if any(r["status"] == "blocked" for r in rows) else 0
    print(f"acceptance: zk2kraft plan --fleet over {len(clusters)} clusters: exit "
          f"{fleet.returncode} (rows call for {want}) in {wall:.1f} s, Spark's cold start "
          f"included; {same}/{len(clusters)} rows exactly as plan alone says", flush=True)
    return same == len(clusters) and fleet.returncode == want


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clusters", type=int, default=20)
    ap.add_argument("--min-partitions", type=int, default=1000)
    ap.add_argument("--max-partitions", type=int, default=20000)
    ap.add_argument("--zookeepers", type=int, help="ZooKeeper processes (default: one a cluster)")
    ap.add_argument("--rtt-ms", default="2,20", help="round trips to measure (even, ms)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each engine per RTT")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    sizes = _sizes(args.clusters, args.min_partitions, args.max_partitions)
    args.zookeepers = args.zookeepers or args.clusters
    print(f"fleet: {args.clusters} clusters, {sum(sizes)} partitions ({sizes[0]:.0f}.."
          f"{sizes[-1]:.0f}), {args.zookeepers} ZooKeeper(s), {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    heap = "1g" if args.zookeepers <= 2 else "256m"
    # one by one, from this thread: a server dies with the thread that spawned it (PDEATHSIG)
    servers = [ZkServer(heap=heap).start() for _ in range(args.zookeepers)]
    clients = []
    proxy = Toxiproxy()
    starter: SparkStarter | None = None
    try:
        t0 = time.perf_counter()
        clusters: list[FleetCluster] = []
        for i, partitions in enumerate(sizes):
            server = servers[i % len(servers)]
            connect, client = client_in_new_chroot(server.connect, f"fleet{i}")
            clients.append(client)
            generate_sample_cluster(client, SampleSpec.clean(
                topics=max(1, int(partitions) // 10), partitions_per_topic=10, seed=i,
                topic_without_id=i % 5 == 2, pending_deletion=i % 4 == 1))
            chroot = connect[len(server.connect):]
            listen = proxy.proxy(f"zk{i}", server.connect, latency_ms=1)
            clusters.append(FleetCluster(f"c{i:02d}-{int(partitions)}", i + 1,
                                         ConnectOptions(listen + chroot, timeout_s=30.0),
                                         LATEST_PRODUCTION))
        print(f"generated in {time.perf_counter() - t0:.1f} s", flush=True)
        master = fleet_master(args.master, len(clusters))
        t0 = time.perf_counter()
        starter = SparkStarter(master).start()
        runtime = starter.get(timeout=600)
        # every Python worker forked and its imports done (the smallest clusters, one a slot)
        run_fleet(runtime, clusters[:runtime.default_parallelism], plan_result)
        print(f"Spark {master}: started and warmed in {time.perf_counter() - t0:.1f} s",
              flush=True)
        figures: dict[str, object] = {"clusters": len(clusters), "partitions": sum(sizes),
                                      "master": master, "cores": os.cpu_count(), "rtt": {}}
        for rtt in (int(r) for r in args.rtt_ms.split(",")):
            for i in range(len(clusters)):
                proxy.set_latency(f"zk{i}", rtt // 2)
            walls: dict[str, list[float]] = {"in-process": [], "spark": []}
            last: dict[str, FleetResult] = {}
            for _ in range(args.rounds):
                load = os.getloadavg()[0]
                last["in-process"] = run_fleet_in_process(clusters, plan_result)
                reset_peak_rss()  # the driver's own peak during the Spark run only
                last["spark"] = run_fleet(runtime, clusters, plan_result)
                driver_peak = peak_rss_bytes()
                _check_same(last["in-process"], last["spark"])
                for name, result in last.items():
                    walls[name].append(result.seconds)
                    print(f"  {rtt} ms RTT {name:>10}: {result.seconds:7.1f} s (load {load:.1f})",
                          flush=True)
            a, s = statistics.median(walls["in-process"]), statistics.median(walls["spark"])
            tasks = [r["task_peak_rss_bytes"] for r in last["spark"].rows]
            secs = [float(r["task_seconds"]) for r in last["spark"].rows]  # type: ignore[arg-type]
            print(f"{rtt} ms RTT: in-process {a:.1f} s, Spark {s:.1f} s, a/s {a / s:.2f}; "
                  f"task seconds {min(secs):.1f}..{max(secs):.1f}; task peak RSS "
                  f"{_mb(min(tasks))}..{_mb(max(tasks))} MB; driver: this process "
                  f"{_mb(driver_peak)} MB, Spark JVM "
                  f"{_mb(runtime.jvm_peak_rss_bytes())} MB", flush=True)
            figures["rtt"][str(rtt)] = {  # type: ignore[index]
                "in_process_s": walls["in-process"], "spark_s": walls["spark"],
                "ratio": a / s, "task_peak_rss_bytes": tasks, "task_seconds": secs,
                "in_process_task_peak_rss_bytes":
                    [r["task_peak_rss_bytes"] for r in last["in-process"].rows],
                "driver_peak_rss_bytes": {"cli": driver_peak,
                                          "spark_driver": runtime.jvm_peak_rss_bytes()},
            }
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1), encoding="utf-8")
        starter.stop()  # the command starts its own session
        starter = None
        if not _accept(clusters):
            return 1
    finally:
        if starter is not None:
            starter.stop()
        for client in clients:
            client.stop()
            client.close()
        proxy.close()
        for server in servers:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
