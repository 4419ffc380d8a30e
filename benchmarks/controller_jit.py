"""A migration-phase JIT option, measured: what a KRaft controller limited to C1
(`-XX:TieredStopAtLevel=1`) costs in steady state during dual-write, against Kafka's default JIT.
Prints figures; it is not a test.

    python benchmarks/controller_jit.py                         # 1,000 partitions, 2 runs
    python benchmarks/controller_jit.py --partitions 10000 --runs 3 --measure 120
    python benchmarks/controller_jit.py --runs 1 --c1-first --warm-up 600   # C1 goes first

Per run and JIT setting (the settings alternate which goes first, run by run, so a load that
drifts cannot favour one): a fresh cluster of real Kafka 3.9.1 ZooKeeper-mode brokers in
migration mode (`tests/support/migration_cluster.py`), `--partitions` created through the admin
API, and Kafka's own KRaft controller 3000 started in migration mode with or without the flag;
once it is in DUAL_WRITE the canary (`migrate.online.canary`: an IncrementalAlterConfigs every
50 ms, which the brokers forward to the controller and the controller writes to its log and, dual-
writing, to ZooKeeper; an idempotent producer acks=all every 10 ms with a consumer) runs
`--warm-up` seconds (the JIT's transient) and then `--measure` seconds, over which are taken:
the controller JVM's CPU seconds (/proc/PID/stat utime + stime), and the admin requests'
latency (sent -> answered) p50 / p90 / max. The controller's CPU from its launch to DUAL_WRITE
(the migration itself, compilation included) is printed too, with the 1-minute load average.

Why only during the migration: the controllers restart at finalisation anyway (the migration
configs go), so a JIT setting given to them for the migration phase costs only while the
migration runs. Figures, with date and load: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from rehearsal import _chroot, _cluster_id, _create_partitions  # noqa: E402

from migrate.online.canary import Canary  # noqa: E402
from tests.support.kafka import storage_format  # noqa: E402
from tests.support.migration_cluster import (  # noqa: E402
    CONTROLLER_ID,
    dual_write_at,
    migration_cluster,
    migration_controller,
)
from tests.support.zk import ZkServer  # noqa: E402

C1 = "-XX:TieredStopAtLevel=1"
_TICKS = os.sysconf("SC_CLK_TCK")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--partitions", type=int, default=1000)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--brokers", type=int, default=2)
    p.add_argument("--heap", default="512m", help="each Kafka JVM's -Xmx")
    p.add_argument("--warm-up", type=float, default=30.0, help="seconds of load before measuring")
    p.add_argument("--measure", type=float, default=60.0, help="seconds measured")
    p.add_argument("--json", help="write the figures here too")
    p.add_argument("--c1-first", action="store_true",
                   help="C1 first in odd runs (the default JIT goes first in odd runs otherwise)")
    return p


def _cpu_s(pid: int) -> float:
    """The process's user + system CPU seconds so far (/proc/PID/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


def one(root: Path, connect: str, args: argparse.Namespace, jit: str) -> dict[str, Any]:
    """One cluster, its controller in DUAL_WRITE with `jit`, the canary's load measured."""
    with migration_cluster(root, connect, brokers=args.brokers, heap=args.heap) as cluster:
        _create_partitions(cluster.bootstrap, args.partitions)
        controller = migration_controller(root, cluster, root / f"voter{CONTROLLER_ID}",
                                          heap=args.heap)
        controller.jvm_flags = [C1] if jit == "C1" else []
        storage_format(controller.config_path, _cluster_id(connect))
        try:
            controller.launch()
            pid = controller.pid
            assert pid is not None
            dual_write_at(controller, timeout=900)
            cpu_migration = _cpu_s(pid)
            canary = Canary(cluster.bootstrap)
            canary.start()
            canary.warm_up()
            time.sleep(args.warm_up)
            load_before = os.getloadavg()[0]
            cpu0, t0 = _cpu_s(pid), time.monotonic()
            time.sleep(args.measure)
            cpu1, t1 = _cpu_s(pid), time.monotonic()
            load_after = os.getloadavg()[0]
            report = canary.stop(t0).to_json()
        finally:
            controller.stop()
    latencies = [done - sent for sent, done, what in report["timeline"]
                 if what == "ok" and sent >= 0 and done <= (t1 - t0) * 1000.0]
    return {
        "jit": jit, "cpu_launch_to_dual_write_s": round(cpu_migration, 2),
        "cpu_s": round(cpu1 - cpu0, 2), "cpu_share": round((cpu1 - cpu0) / (t1 - t0), 3),
        "admin_requests": len(latencies),
        "admin_p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "admin_p90_ms": round(_percentile(latencies, 0.9), 1) if latencies else None,
        "admin_max_ms": round(max(latencies), 1) if latencies else None,
        "request_errors": report["requests"]["errors"],
        "records": report["records"], "load": [round(load_before, 1), round(load_after, 1)],
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-bench-jit-"))
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print(f"{started}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"{args.partitions} partitions, {args.brokers} brokers, warm-up {args.warm_up:g} s, "
          f"measured {args.measure:g} s", flush=True)
    figures: dict[str, Any] = {"started": started, "partitions": args.partitions, "runs": []}
    server = ZkServer(heap="1g").start()
    try:
        for run in range(1, args.runs + 1):
            order = ["default", "C1"] if bool(run % 2) != args.c1_first else ["C1", "default"]
            for jit in order:
                name = f"{jit}-{run}"
                r = one(work / name, _chroot(server.connect, f"/jit-{name}"), args, jit)
                figures["runs"].append(r)
                print(f"  run {run} {jit:>7}: controller CPU {r['cpu_s']:.2f} s over "
                      f"{args.measure:g} s ({r['cpu_share']:.1%} of a core), launch -> "
                      f"DUAL_WRITE {r['cpu_launch_to_dual_write_s']:.2f} CPU s; admin latency "
                      f"p50 {r['admin_p50_ms']} / p90 {r['admin_p90_ms']} / max "
                      f"{r['admin_max_ms']} ms over {r['admin_requests']} requests (errors "
                      f"{r['request_errors'] or 'none'}); load {r['load'][0]} -> "
                      f"{r['load'][1]}", flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(figures, indent=2))
        for jit in ("default", "C1"):
            rs = [r for r in figures["runs"] if r["jit"] == jit]
            print(f"{jit:>7}: median controller CPU "
                  f"{statistics.median(r['cpu_share'] for r in rs):.1%} of a core, admin p50 "
                  f"{statistics.median(r['admin_p50_ms'] or 0 for r in rs):.1f} ms, p90 "
                  f"{statistics.median(r['admin_p90_ms'] or 0 for r in rs):.1f} ms; launch -> "
                  f"DUAL_WRITE {statistics.median(r['cpu_launch_to_dual_write_s'] for r in rs):.2f}"
                  " CPU s", flush=True)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
