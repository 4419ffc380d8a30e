"""Which engine runs the bulk pipeline: `--spark-master auto|in-process|URL`, and why.

Spark is the pipeline's engine for big clusters; a small one is done by this process before a
JVM would have started. `auto` (the default) picks Spark `local[*]` from
`AUTO_SPARK_MIN_PARTITIONS` migrated partitions up and in-process below, judged after the read
(the partition count is known then) and after the blockers (a refused migration never starts a
JVM). The threshold is measured by `benchmarks/migrate.py --auto-threshold`, which times both
engines end to end on the same trees and prints where Spark starts to pay; the figures behind
the value are in that benchmark's docstring. Any other value is taken as the operator's choice.
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

AUTO_SPARK_MIN_PARTITIONS = int(os.environ.get("ZK2KRAFT_AUTO_SPARK_MIN_PARTITIONS", "500000"))
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
            f"auto: {partitions:,} partitions >= {threshold:,}, where Spark's parallel "
            "translation outweighs its JVM start-up",
        )
    return EngineChoice(
        None,
        f"auto: {partitions:,} partitions < {threshold:,}, where one process finishes before "
        "Spark's JVM would have started",
    )
