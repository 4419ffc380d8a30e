"""Which engine runs the bulk pipeline: `--spark-master auto|in-process|URL`, and why.

Spark is the pipeline's engine for big clusters on machines with cores to spare; a small one is
done by this process before a JVM would have started. `auto` (the default) picks Spark
`local[*]` from `AUTO_SPARK_MIN_PARTITIONS` migrated partitions up and in-process below, judged
after the read (the partition count is known then) and after the blockers (a refused migration
never starts a JVM). Any other value is taken as the operator's choice.

The threshold is the crossover of two measured costs on this machine's core count:
in-process, translate+encode costs `a` CPU seconds per partition on one core; on Spark, a cold
start `S`, then `d` per partition on the driver (shipping the topic table as Arrow columns and
collecting the values: serial) and `c` per partition on the task cores (JVM and Python workers,
spread over `cores`). Spark pays above `S / (a - d - c / cores)` partitions, and never where
that is not positive. The four figures are `benchmarks/migrate.py` figure (5)'s; the runs they
come from (date, size, load) are in docs/benchmarks.md, "Spark vs in-process".
`ZK2KRAFT_AUTO_SPARK_MIN_PARTITIONS` sets the threshold without a release.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = [
    "AUTO",
    "AUTO_SPARK_MIN_PARTITIONS",
    "IN_PROCESS",
    "LOCAL_SPARK",
    "EngineChoice",
    "choose_engine",
    "spark_crossover",
]

AUTO = "auto"
"""`--spark-master auto`: choose by cluster size (the default)."""

IN_PROCESS = "in-process"
"""`--spark-master in-process`: run the pipeline in this process, without Spark."""

LOCAL_SPARK = "local[*]"
"""The Spark master `auto` uses for big clusters."""

SPARK_COLD_START_CPU_S = 18.9
"""S: CPU seconds from starting Spark to a warm session (JVM, session, warm-up job)."""

IN_PROCESS_CPU_S_PER_PARTITION = 8.7e-6
"""a: translate+encode in this process, per partition."""

SPARK_DRIVER_CPU_S_PER_PARTITION = 3.8e-6
"""d: the Spark job's serial part on the driver, per partition."""

SPARK_CORE_CPU_S_PER_PARTITION = 1.63e-5
"""c: the Spark job's parallel part (JVM and Python workers), per partition, over all cores."""


def spark_crossover(cold_start_s: float, a: float, d: float, c: float,
                    cores: int) -> int | None:
    """Partitions from which Spark on `cores` cores finishes before one process, or None.

    In-process takes `a * n`; Spark `S + d * n + c * n / cores` (module docstring).
    """
    gain = a - d - c / max(1, cores)
    if gain <= 0:
        return None
    return int(cold_start_s / gain) + 1


def _auto_threshold() -> int | None:
    override = os.environ.get("ZK2KRAFT_AUTO_SPARK_MIN_PARTITIONS")
    if override:
        return int(override)
    return spark_crossover(SPARK_COLD_START_CPU_S, IN_PROCESS_CPU_S_PER_PARTITION,
                           SPARK_DRIVER_CPU_S_PER_PARTITION, SPARK_CORE_CPU_S_PER_PARTITION,
                           os.cpu_count() or 1)


AUTO_SPARK_MIN_PARTITIONS: int | None = _auto_threshold()
"""Migrated partitions from which `auto` starts Spark on this machine; None: never."""


@dataclass(frozen=True, slots=True)
class EngineChoice:
    """The engine the pipeline runs on and the reason printed for the operator.

    Attributes:
        spark_master: the Spark master URL, or None for in-process.
        reason: one line saying why (names the threshold when `auto` chose).
    """

    spark_master: str | None
    reason: str

    @property
    def name(self) -> str:
        """`spark (<master>)` or `in-process`, as the summary line prints it."""
        return IN_PROCESS if self.spark_master is None else f"spark ({self.spark_master})"


def choose_engine(requested: str, partitions: int,
                  threshold: int | None = AUTO_SPARK_MIN_PARTITIONS) -> EngineChoice:
    """Resolve `--spark-master` for a cluster of `partitions` migrated partitions.

    Args:
        requested: the flag's value: `auto`, `in-process` or a Spark master URL.
        partitions: partitions the migration writes.
        threshold: `auto`'s size limit (partitions) from which Spark is used; None: never.
    """
    if requested == IN_PROCESS:
        return EngineChoice(None, "--spark-master in-process")
    if requested != AUTO:
        return EngineChoice(requested, f"--spark-master {requested}")
    if threshold is None:
        return EngineChoice(
            None,
            f"auto: {partitions:,} partitions; on {os.cpu_count()} cores Spark never catches "
            "up with one process (measured costs: docs/benchmarks.md)",
        )
    if partitions >= threshold:
        return EngineChoice(
            LOCAL_SPARK,
            f"auto: {partitions:,} partitions >= {threshold:,}, where Spark local[*] on "
            f"{os.cpu_count()} cores finishes first",
        )
    return EngineChoice(
        None,
        f"auto: {partitions:,} partitions < {threshold:,}, where one process finishes before "
        "Spark's JVM would have started",
    )
