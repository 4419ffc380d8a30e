"""Which engine runs the bulk pipeline: `--spark-master auto|in-process|URL`, and why.

Spark is the pipeline's engine for big clusters; a small one is done by this process before a
JVM would have started. `auto` (the default) picks Spark `local[*]` from
`AUTO_SPARK_MIN_PARTITIONS` migrated partitions up and in-process below, judged after the read
(the partition count is known then) and after the blockers (a refused migration never starts a
JVM). Any other value is taken as the operator's choice.

The threshold, from `benchmarks/migrate.py` figure (5) on the project's 2-core machines
(2026-11-23, 100,000 partitions, load average 25-36): Spark's cold start (session and warm
Python workers) took 111 s, and translate+encode cost 7.4e-5 s per partition on Spark against
1.7e-5 s in one process, so Spark never catches up there: the crossover S / (a - b) does not
exist while a < b. The whole `migrate --offline` took 15.7 s in-process at 100,000 partitions
(peak 199 MiB) against 166 s with Spark. `auto` therefore keeps every cluster up to 1,000,000
partitions (the largest the benchmark generates, `--topics 10000`, and about the largest a
ZooKeeper-mode Kafka runs) in-process, and hands Spark only what is larger. On machines with
many cores re-run the benchmark: it prints the crossover, and `ZK2KRAFT_AUTO_SPARK_MIN_PARTITIONS`
sets the threshold without a release.
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
]

AUTO = "auto"
"""`--spark-master auto`: choose by cluster size (the default)."""

IN_PROCESS = "in-process"
"""`--spark-master in-process`: run the pipeline in this process, without Spark."""

LOCAL_SPARK = "local[*]"
"""The Spark master `auto` uses for big clusters."""

AUTO_SPARK_MIN_PARTITIONS = int(os.environ.get("ZK2KRAFT_AUTO_SPARK_MIN_PARTITIONS", "1000000"))
"""Migrated partitions from which `auto` starts Spark (see benchmarks/migrate.py)."""


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
                  threshold: int = AUTO_SPARK_MIN_PARTITIONS) -> EngineChoice:
    """Resolve `--spark-master` for a cluster of `partitions` migrated partitions.

    Args:
        requested: the flag's value: `auto`, `in-process` or a Spark master URL.
        partitions: partitions the migration writes.
        threshold: `auto`'s size limit (partitions) from which Spark is used.
    """
    if requested == IN_PROCESS:
        return EngineChoice(None, "--spark-master in-process")
    if requested != AUTO:
        return EngineChoice(requested, f"--spark-master {requested}")
    if partitions >= threshold:
        return EngineChoice(
            LOCAL_SPARK,
            f"auto: {partitions:,} partitions >= {threshold:,}, too many for one process; "
            "Spark local[*] spreads the translation",
        )
    return EngineChoice(
        None,
        f"auto: {partitions:,} partitions < {threshold:,}, where one process finishes before "
        "Spark's JVM would have started",
    )
