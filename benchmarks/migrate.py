"""Migrate benchmark: `zk2kraft migrate --cutover none` and `verify` on a generated cluster.
Prints figures; it is not a test.

    python benchmarks/migrate.py                          # 1,000 topics x 100 = 100,000 partitions
    python benchmarks/migrate.py --topics 10000           # 1,000,000 partitions (ZooKeeper -Xmx3g)
    python benchmarks/migrate.py --spark-master local[2]  # any engine the CLI takes (default auto)

Figures:
  (1) `migrate --cutover none` into 3 voters, run as the real CLI in a subprocess: wall time, and
      the CLI's own split (ZooKeeper read, waiting for Spark beyond the read, translate+encode,
      write) and peak memory of the CLI process (ru_maxrss), of the Spark driver JVM and of the
      PySpark Python workers under it (VmHWM from /proc, sampled by the CLI before it stops
      Spark) — via ZK2KRAFT_STATS_FILE; the footprint line sums all three;
  (1b) the same command with `--spark-master in-process` (no JVM), and whether its logs are
      byte-identical to the Spark run's;
  (2) `verify` against the same voters: wall time and exit code (must be 0: parity);
  (3) translate+encode, the topic table: Spark (`--ratio-master`, one `map_batches` job on an
      already started session; its first job, what a migrate run pays, and a warm second one)
      against the same pure functions in this one Python process (run before and after the
      Spark jobs; same snapshot, same output, asserted equal). In CPU seconds (this process,
      the Spark JVM and its Python workers, from /proc) and in wall seconds: on a loaded machine
      wall time mostly measures the wait for a core;
  (5) `--spark-master auto`'s model (migrate/bulk/engine.py): a, in-process CPU per partition; S,
      Spark's cold start (session + warm-up job) in CPU seconds; d, the Spark job's driver CPU
      per partition (serial); c, its JVM + worker CPU per partition (spread over the cores).
      Prints c / a (the per-core cost against in-process, target <= 1.5), the cores from which
      Spark can pay (c / (a - d)) and the crossover S / (a - d - c / cores). The figures
      `migrate/bulk/engine.py` uses, dated with the load, are in docs/benchmarks.md.
Targets: 100,000 partitions migrated in < 60 s end to end, peak memory < 2 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kazoo.client import KazooClient  # noqa: E402

from migrate.bulk.engine import AUTO_SPARK_MIN_PARTITIONS, spark_crossover  # noqa: E402
from migrate.bulk.pipeline import encode_log, warm_up  # noqa: E402
from migrate.bulk.spark import SparkRuntime  # noqa: E402
from migrate.bulk.spark_start import SparkStarter  # noqa: E402
from migrate.translate.framing import TranslationOptions  # noqa: E402
from samples import SampleSpec, generate_sample_cluster  # noqa: E402
from tests.support.zk import ZkServer  # noqa: E402
from zkreader import ClusterSnapshot, ConnectOptions, open_session, read_cluster  # noqa: E402

VOTER_IDS = (3000, 3001, 3002)  # KRaft controller ids must differ from the brokers' ids
MiB = 1024 * 1024


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--topics", type=int, default=1000)
    p.add_argument("--partitions-per-topic", type=int, default=100)
    p.add_argument("--brokers", type=int, default=6)
    p.add_argument("--spark-master", default="auto",
                   help="the engine of figure (1), as the CLI takes it (default: auto, the CLI's "
                        "own default, so the target line describes what operators run)")
    p.add_argument("--ratio-master", default="local[*]",
                   help="the Spark master of figures (3) and (5) (default: local[*])")
    p.add_argument("--zk-heap", default=None, help="ZooKeeper -Xmx (default: by tree size)")
    p.add_argument("--connect", help="an already generated cluster (host:port/chroot)")
    p.add_argument("--json", help="also write the figures as JSON here")
    p.add_argument("--skip-ratio", action="store_true", help="skip figure (3)")
    return p


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[float, subprocess.Popen[bytes],
                                                                  bytes, bytes]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "migrate.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    out, err = proc.communicate()
    return time.perf_counter() - started, proc, out, err


def _cpu(runtime: SparkRuntime | None) -> tuple[float, float, float]:
    """CPU seconds so far: this process (the driver), the Spark JVM, its Python workers."""
    jvm, workers = (runtime.cpu_seconds() if runtime is not None else None) or (0.0, 0.0)
    return time.process_time(), jvm, workers


def _in_process_cpu_s(snapshot: ClusterSnapshot, options: TranslationOptions) -> tuple[float, float,
                                                                                       list[bytes]]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = encode_log(snapshot, options)
    return time.process_time() - cpu, time.perf_counter() - wall, out.values


def _ratio(connect: str, master: str) -> dict[str, float | int | list[float] | None]:
    """Figures (3) and (5): in-process vs Spark on one snapshot, in CPU seconds and wall seconds.

    CPU time is what the model of `migrate/bulk/engine.py` needs: on a loaded machine a process's
    wall time is mostly its wait for a core. In-process runs before and after the Spark jobs
    (interleaved, so load drift does not favour one side) and their mean is a."""
    with open_session(ConnectOptions(connect, timeout_s=60)) as session:
        snapshot = read_cluster(session, watch=False)
    options = TranslationOptions()
    local_cpu_1, local_wall_1, local = _in_process_cpu_s(snapshot, options)
    c0 = _cpu(None)
    started = time.perf_counter()
    starter = SparkStarter(master, warmup=warm_up).start()
    try:
        runtime = starter.get(timeout=900)
        cold_start_s = time.perf_counter() - started  # what migrate pays before its first job
        c1 = _cpu(runtime)
        jobs = []
        for _ in range(2):  # the first job is what a migrate run pays; the second, warm
            before, wall = _cpu(runtime), time.perf_counter()
            on_spark = encode_log(snapshot, options, spark=runtime)
            after = _cpu(runtime)
            jobs.append((time.perf_counter() - wall, after[0] - before[0],
                         after[1] - before[1] + after[2] - before[2]))
            assert on_spark.values == local, "Spark output differs from the in-process output"
        parallelism = runtime.default_parallelism
    finally:
        starter.stop()
    local_cpu_2, local_wall_2, _ = _in_process_cpu_s(snapshot, options)
    partitions = sum(len(t.assignment) for t in snapshot.topics.values())
    a = (local_cpu_1 + local_cpu_2) / 2 / partitions
    (spark_wall, driver_cpu, parallel_cpu), (warm_wall, warm_driver, warm_parallel) = jobs
    d = driver_cpu / partitions
    c = parallel_cpu / partitions
    start_cpu = (c1[0] - c0[0]) + c1[1] + c1[2]
    return {
        "partitions": partitions,
        "records": len(local),
        "spark_parallelism": parallelism,
        "cores": os.cpu_count(),
        "spark_cold_start_wall_s": cold_start_s,
        "spark_cold_start_cpu_s": start_cpu,
        "in_process_cpu_s": [local_cpu_1, local_cpu_2],
        "in_process_wall_s": [local_wall_1, local_wall_2],
        "spark_wall_s": spark_wall,
        "spark_warm_wall_s": warm_wall,
        "spark_driver_cpu_s": driver_cpu,
        "spark_parallel_cpu_s": parallel_cpu,
        "spark_warm_driver_cpu_s": warm_driver,
        "spark_warm_parallel_cpu_s": warm_parallel,
        "a_in_process_cpu_s_per_partition": a,
        "d_spark_driver_cpu_s_per_partition": d,
        "c_spark_core_cpu_s_per_partition": c,
        "per_core_over_in_process": c / a,
        "wall_per_core_over_in_process": spark_wall * parallelism / min(local_wall_1,
                                                                         local_wall_2),
        "min_cores_for_a_crossover": (c / (a - d)) if a > d else None,
        "crossover_here": spark_crossover(start_cpu, a, d, c, parallelism),
    }


def _round(v: object) -> object:
    if isinstance(v, float):
        return float(f"{v:.4g}")
    if isinstance(v, list):
        return [_round(x) for x in v]
    return v


def _threshold(partitions: int | None) -> str:
    return "never (Spark never catches up)" if partitions is None else f"{partitions:,} partitions"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    partitions = args.topics * args.partitions_per_topic
    figures: dict[str, object] = {"partitions": partitions, "topics": args.topics,
                                  "spark_master": args.spark_master, "cores": os.cpu_count()}
    server = None
    client = None
    work = Path(tempfile.mkdtemp(prefix="zk2kraft-bench-migrate-"))
    try:
        if args.connect:
            connect = args.connect
        else:
            heap = args.zk_heap or ("3g" if partitions > 300_000 else "1g")
            server = ZkServer(heap=heap).start()
            admin = KazooClient(hosts=server.connect, timeout=60)
            admin.start(timeout=60)
            admin.ensure_path("/bench")
            admin.stop()
            admin.close()
            connect = f"{server.connect}/bench"
            client = KazooClient(hosts=connect, timeout=60)
            client.start(timeout=60)
            spec = SampleSpec.clean(topics=args.topics,
                                    partitions_per_topic=args.partitions_per_topic,
                                    brokers=args.brokers, window=256, batch_ops=500)
            manifest = generate_sample_cluster(client, spec)
            figures["generate_s"] = round(manifest.elapsed_s, 2)
            figures["znodes"] = manifest.znodes
            print(f"generated {manifest.partitions_to_migrate} partitions "
                  f"({manifest.znodes} znodes) in {manifest.elapsed_s:.1f}s", flush=True)

        stats = work / "stats.json"
        voters = [f"--voter={i}={work / f'c{i}'}" for i in VOTER_IDS]
        wall, proc, out, err = _cli(
            "migrate", "--zookeeper", connect, *voters, "--spark-master", args.spark_master,
            "--quiet", "--zk-timeout", "60", env={"ZK2KRAFT_STATS_FILE": str(stats)},
        )
        if proc.returncode != 0:
            sys.stderr.write(err.decode(errors="replace")[-4000:])
            raise SystemExit(f"migrate failed with exit {proc.returncode}")
        s = json.loads(stats.read_text())
        first_log = work / f"c{VOTER_IDS[0]}" / "__cluster_metadata-0"
        log_bytes = sum(p.stat().st_size for p in first_log.glob("*.log"))
        figures["migrate"] = {
            "wall_s": round(wall, 2),
            "stages_s": {k: round(v, 2) for k, v in s["times_s"].items()},
            "peak_rss_mib": {k: (round(v / MiB) if v else None)
                             for k, v in s["peak_rss_bytes"].items()},
            "records": s["last_offset"] + 1,
            "batches": s["batches"],
            "log_mib": round(log_bytes / MiB, 1),
            "engine": s["engine"],
        }
        print("migrate:", json.dumps(figures["migrate"]), flush=True)

        # (1b) the same CLI with the in-process engine (no JVM), into fresh voter dirs
        stats_b = work / "stats-in-process.json"
        voters_b = [f"--voter={i}={work / f'p{i}'}" for i in VOTER_IDS]
        wall_b, proc_b, _, err_b = _cli(
            "migrate", "--zookeeper", connect, *voters_b, "--spark-master", "in-process",
            "--quiet", "--zk-timeout", "60", env={"ZK2KRAFT_STATS_FILE": str(stats_b)},
        )
        if proc_b.returncode != 0:
            sys.stderr.write(err_b.decode(errors="replace")[-4000:])
            raise SystemExit(f"migrate (in-process) failed with exit {proc_b.returncode}")
        sb = json.loads(stats_b.read_text())
        same = all(
            (work / f"p{i}" / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
            == (work / f"c{i}" / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
            for i in VOTER_IDS
        )
        figures["migrate_in_process"] = {
            "wall_s": round(wall_b, 2),
            "stages_s": {k: round(v, 2) for k, v in sb["times_s"].items()},
            "peak_rss_mib": round(sb["peak_rss_bytes"]["cli"] / MiB),
            "same_bytes_as_spark": same,
        }
        print("migrate --spark-master in-process:", json.dumps(figures["migrate_in_process"]),
              flush=True)

        wall, proc, out, err = _cli("verify", "--zookeeper", connect, *voters, "--quiet",
                                    "--zk-timeout", "60")
        figures["verify"] = {"wall_s": round(wall, 2), "exit": proc.returncode}
        if proc.returncode != 0:
            sys.stderr.write(err.decode(errors="replace")[-2000:])
        print("verify:", json.dumps(figures["verify"]), flush=True)

        if not args.skip_ratio:
            ratio = _ratio(connect, args.ratio_master)
            figures["translate_encode"] = {k: _round(v) for k, v in ratio.items()}
            print("translate+encode:", json.dumps(figures["translate_encode"]), flush=True)
            per_core = ratio["per_core_over_in_process"]
            assert isinstance(per_core, float)
            print(f"Spark per-core CPU per partition / in-process: {per_core:.2f} (target <= 1.5: "
                  f"{'met' if per_core <= 1.5 else 'MISSED'}); wall-clock, per core: "
                  f"{ratio['wall_per_core_over_in_process']:.2f}", flush=True)
            cores = ratio["min_cores_for_a_crossover"]
            crossover = ratio["crossover_here"]
            print("auto: with these figures Spark pays off "
                  + ("never (its driver alone costs more per partition than one process)"
                     if cores is None else f"from {cores:.1f} cores")
                  + ("" if crossover is None else
                     f"; here ({ratio['spark_parallelism']} tasks) above {crossover:,} partitions")
                  + "; migrate/bulk/engine.py's threshold on this machine: "
                  + _threshold(AUTO_SPARK_MIN_PARTITIONS), flush=True)

        if client is not None:  # (4) the brokers stop: their ephemerals go, then --offline
            for broker in client.get_children("/brokers/ids"):
                client.delete(f"/brokers/ids/{broker}")
            if client.exists("/controller"):
                client.delete("/controller")
            stats_o = work / "stats-offline.json"
            voters_o = [f"--voter={i}={work / f'o{i}'}" for i in VOTER_IDS]
            wall_o, proc_o, _, err_o = _cli(
                "migrate", "--zookeeper", connect, *voters_o, "--offline", "--quiet",
                "--zk-timeout", "60", env={"ZK2KRAFT_STATS_FILE": str(stats_o)},
            )
            if proc_o.returncode != 0:
                sys.stderr.write(err_o.decode(errors="replace")[-4000:])
                raise SystemExit(f"migrate --offline failed with exit {proc_o.returncode}")
            so = json.loads(stats_o.read_text())
            figures["migrate_offline"] = {
                "wall_s": round(wall_o, 2),
                "stages_s": {k: round(v, 2) for k, v in so["times_s"].items()},
                "engine": so["engine"],
                "peak_rss_mib": {k: (round(v / MiB) if v else None)
                                 for k, v in so["peak_rss_bytes"].items()},
            }
            print("migrate --offline (auto engine):", json.dumps(figures["migrate_offline"]),
                  flush=True)
    finally:
        if client is not None:
            client.stop()
            client.close()
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)

    m = figures["migrate"]
    assert isinstance(m, dict)
    peaks = [v for v in m["peak_rss_mib"].values() if v is not None]
    peak = max(peaks)
    footprint = sum(peaks)  # CLI + Spark driver JVM + PySpark workers: what the host must hold
    print(f"\n{partitions} partitions, engine {m['engine']} (--spark-master "
          f"{args.spark_master}): migrate {m['wall_s']} s end to end "
          f"(target < 60 s: {'met' if m['wall_s'] < 60 else 'MISSED'}), peak memory "
          f"{peak} MiB in the largest process, {footprint} MiB summed over the CLI, the Spark "
          f"JVM and its Python workers (target < 2048 MiB: "
          f"{'met' if footprint < 2048 else 'MISSED'})")
    off = figures.get("migrate_offline")
    if isinstance(off, dict):
        print(f"{partitions} partitions, offline path (brokers stopped, `migrate --offline`): "
              f"{off['wall_s']} s end to end on the {off['engine']} engine")
    print(f"auto threshold in use: {_threshold(AUTO_SPARK_MIN_PARTITIONS)}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
