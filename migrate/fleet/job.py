"""`plan --fleet`'s work: plan each cluster in its own task, aggregate the fleet's judgement.

A task (`plan_cluster`) reads one cluster with the pipelined reader
(`flags.zookeeper.read_snapshot`, the read `plan` does) and judges it with the `Judge` it is
handed: `cli.plan.plan_result`, `plan`'s own translate + judge (passed in by `plan`, so this
package never imports the command that calls it): there is no second implementation of the
pre-flight. Whatever ends that cluster's read or
judgement with one of our errors (unreachable within its `--zk-timeout`, authentication refused,
a malformed znode) is caught in the task and becomes the cluster's row, with the exit code
`plan` would have ended with; the job itself never fails for one cluster.

`run_fleet` runs the tasks as one Spark job (`SparkRuntime.map_each_grouped`): the rows come back
in file order, and the statuses and blocker kinds are grouped in Spark (key -> cluster names).
`run_fleet_in_process` runs the very same task function one cluster after another, for the
benchmark's comparison and for `--spark-master in-process`.

Why `local[*]` starts more task slots than cores for a fleet (`fleet_master`): a task's waits on
its ZooKeeper's round trips leave its core idle, so four slots a core keep the cores busy while
other tasks wait. On 2 cores the fleet measured CPU-bound up to 20 ms RTT (docs/benchmarks.md,
"Fleet pre-flight"); four slots against one a core was not measured.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from migrate.bulk.spark import _vm_hwm, own_peak_rss_bytes  # the one reader of each
from migrate.fleet.file import FleetCluster

if TYPE_CHECKING:
    from migrate.bulk.spark import SparkRuntime
    from migrate.preflight.checks import PlanSummary

# `cli.plan.plan_result`'s shape: (snapshot, metadata_version=, password_encoder_secret=,
# offline=, target_kafka=) -> (translation, summary)
Judge = Callable[..., "tuple[Any, PlanSummary]"]

__all__ = ["STATUSES", "FleetResult", "Judge", "fleet_master", "peak_rss_bytes", "plan_cluster",
           "reset_peak_rss", "run_fleet", "run_fleet_in_process"]

STATUSES = ("ready", "warnings", "blocked", "unreachable")
SLOTS_PER_CORE = 4  # local[*] for a fleet: tasks wait on the network (module docstring)
_LOCAL_ALL = re.compile(r"^local\[\*\]$")


@dataclass
class FleetResult:
    """What the fleet job produced.

    Attributes:
        rows: one `plan --json` document a cluster, plus `name`, `status`, `error`, `path`
            and the task's measurements, in the fleet file's order.
        by_status: status -> the clusters in it (grouped in Spark).
        blockers_by_kind: blocker code, or `error:<kind>` for a cluster that could not be
            judged, -> the clusters it hits (grouped in Spark).
        engine: `{"name": "spark", "master": ...}` or `{"name": "in-process"}`.
        driver_peak_rss_bytes: this process's peak, and the Spark driver JVM's (None
            in-process).
        seconds: the job's wall time.
    """

    rows: list[dict[str, object]]
    by_status: dict[str, list[str]]
    blockers_by_kind: dict[str, list[str]]
    engine: dict[str, str]
    driver_peak_rss_bytes: dict[str, int | None] = field(default_factory=dict)
    seconds: float = 0.0


def fleet_master(master: str, clusters: int, cores: int | None = None) -> str:
    """The Spark master a fleet runs on: `local[*]` becomes `local[N]` with `SLOTS_PER_CORE`
    slots a core, at most one a cluster; any other master is used as given."""
    if _LOCAL_ALL.match(master) is None:
        return master
    cores = cores or os.cpu_count() or 1
    return f"local[{max(1, min(clusters, SLOTS_PER_CORE * cores))}]"


def reset_peak_rss() -> None:
    """Reset this process's VmHWM (Linux `clear_refs` 5), so the task's own peak is measured
    in a reused Python worker; harmless where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        pass


def peak_rss_bytes() -> int:
    """This process's peak resident memory since the last `reset_peak_rss` (VmHWM)."""
    peak = _vm_hwm(os.getpid())
    return own_peak_rss_bytes() if peak is None else peak


def _status(blockers: Sequence[object], warnings: Sequence[object]) -> str:
    return "blocked" if blockers else "warnings" if warnings else "ready"


def plan_cluster(cluster: FleetCluster, *, judge: Judge) -> dict[str, object]:
    """One task: read one cluster and judge it with `judge` (`plan`'s); its error is its row.

    Returns:
        `plan --json`'s document for the cluster plus `name`, `status`, `error` (None, or
        `{"kind", "exit_code", "message"}`), `path` (offline or online, the target Kafka and
        metadata.version the line asks for), `task_seconds` and `task_peak_rss_bytes`.
    """
    from migrate._progress import ProgressBars
    from migrate.cli.exit_codes import EXIT_INTERNAL, EXIT_UNREACHABLE, exit_code_for
    from migrate.flags.zookeeper import read_snapshot

    reset_peak_rss()
    t0 = time.perf_counter()
    row: dict[str, object] = {"name": cluster.name}
    try:
        with ProgressBars(enabled=False) as bars:
            snapshot = read_snapshot(cluster.connect, bars)
        _, summary = judge(
            snapshot,
            metadata_version=cluster.metadata_version,
            password_encoder_secret=cluster.password_encoder_secret,
            offline=cluster.offline,
            target_kafka=cluster.target_kafka,
        )
        doc = summary.to_json()
        row["status"] = _status(summary.report.blockers, summary.report.warnings)
        row["error"] = None
    except Exception as exc:  # noqa: BLE001 - one cluster's failure is its row, not the job's
        code = exit_code_for(exc)
        row["status"] = "unreachable" if code == EXIT_UNREACHABLE else "blocked"
        row["error"] = {"kind": type(exc).__name__,
                        "exit_code": EXIT_INTERNAL if code is None else code,
                        "message": str(exc)}
        doc = {"blockers": [], "warnings": [], "records": {}, "brokers": None, "topics": None,
               "partitions": None}
    row.update(doc)
    row["path"] = {"offline": cluster.offline, "target_kafka": cluster.target_kafka,
                   "metadata_version": str(cluster.metadata_version)}
    row["task_seconds"] = round(time.perf_counter() - t0, 3)
    row["task_peak_rss_bytes"] = peak_rss_bytes()
    return row


def fleet_pairs(row: dict[str, object]) -> Iterable[tuple[str, str]]:
    """What the fleet groups by, for one row: its status, each blocker kind it hits (once),
    and for a cluster that could not be judged `error:<kind>`."""
    name = str(row["name"])
    yield f"status:{row['status']}", name
    kinds: set[str] = set()
    blockers = row["blockers"]
    assert isinstance(blockers, list)
    for blocker in blockers:
        kinds.add(str(blocker["code"]))
    error = row["error"]
    if isinstance(error, dict):
        kinds.add(f"error:{error['kind']}")
    for kind in sorted(kinds):
        yield f"kind:{kind}", name


def _result(rows: list[dict[str, object]], grouped: dict[str, list[str]],
            engine: dict[str, str]) -> FleetResult:
    order = {str(r["name"]): i for i, r in enumerate(rows)}

    def ordered(names: Iterable[str]) -> list[str]:
        return sorted(names, key=order.__getitem__)

    by_status = {s: ordered(grouped.get(f"status:{s}", [])) for s in STATUSES}
    kinds = {k.removeprefix("kind:"): ordered(v) for k, v in grouped.items()
             if k.startswith("kind:")}
    # the kind hitting most clusters first, then by name
    blockers_by_kind = dict(sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    for row in rows:
        row["engine"] = engine
    return FleetResult(rows, by_status, blockers_by_kind, engine)


def run_fleet(runtime: SparkRuntime, clusters: Sequence[FleetCluster], judge: Judge, *,
              progress: Callable[[int, int], None] | None = None) -> FleetResult:
    """Plan every cluster as one Spark job; the grouping is done in Spark too.

    Raises:
        SparkError: the job itself failed (never for one cluster's error).
    """
    t0 = time.perf_counter()
    # a partial of two top-level functions: pickled by reference, imported by the workers
    rows, grouped = runtime.map_each_grouped(clusters, partial(plan_cluster, judge=judge),
                                             fleet_pairs, progress=progress)
    result = _result(rows, grouped, {"name": "spark", "master": runtime.master})
    result.seconds = time.perf_counter() - t0
    result.driver_peak_rss_bytes = {
        "cli": own_peak_rss_bytes(), "spark_driver": runtime.jvm_peak_rss_bytes(),
    }
    return result


def run_fleet_in_process(clusters: Sequence[FleetCluster], judge: Judge, *,
                         progress: Callable[[int, int], None] | None = None) -> FleetResult:
    """The same task function, one cluster after another in this process."""
    t0 = time.perf_counter()
    rows: list[dict[str, object]] = []
    grouped: dict[str, list[str]] = {}
    for cluster in clusters:
        rows.append(plan_cluster(cluster, judge=judge))
        for key, name in fleet_pairs(rows[-1]):
            grouped.setdefault(key, []).append(name)
        if progress is not None:
            progress(len(rows), len(clusters))
    result = _result(rows, grouped, {"name": "in-process"})
    result.seconds = time.perf_counter() - t0
    result.driver_peak_rss_bytes = {
        "cli": own_peak_rss_bytes(), "spark_driver": None}
    return result
