"""`--spark-master auto`: the crossover model and the choice it makes, with hand-computed values."""

from __future__ import annotations

import os

import pytest

from migrate.bulk.engine import LOCAL_SPARK, choose_engine, spark_crossover


def test_crossover_is_cold_start_over_the_gain_per_partition() -> None:
    # in microseconds (exact in binary): a 8, d 2, c 16 over 4 cores gains 8 - 2 - 4 = 2 us per
    # partition, so a 10 s cold start (1e7 us) is paid back from 5,000,001 partitions on
    assert spark_crossover(1e7, 8.0, 2.0, 16.0, 4) == 5_000_001
    # 16 cores: 8 - 2 - 1 = 5 us gained -> from 2,000,001
    assert spark_crossover(1e7, 8.0, 2.0, 16.0, 16) == 2_000_001


@pytest.mark.parametrize("cores", [1, 2])
def test_no_crossover_where_spark_never_gains(cores: int) -> None:
    # 2 cores: d 2 + c 12 / 2 = 8 = a, nothing gained per partition (1 core: a loss)
    assert spark_crossover(1e7, 8.0, 2.0, 12.0, cores) is None
    # a driver slower than one process alone: never, whatever the cores
    assert spark_crossover(1.0, 8.0, 9.0, 0.0, 1024) is None


def test_auto_follows_the_threshold_and_says_why() -> None:
    small = choose_engine("auto", 999, threshold=1000)
    assert small.spark_master is None and "999 partitions < 1,000" in small.reason
    big = choose_engine("auto", 1000, threshold=1000)
    assert big.spark_master == LOCAL_SPARK and "1,000 partitions >= 1,000" in big.reason
    never = choose_engine("auto", 5_000_000, threshold=None)
    assert never.spark_master is None
    assert f"on {os.cpu_count()} cores Spark never catches up" in never.reason


def test_explicit_choices_are_kept() -> None:
    assert choose_engine("in-process", 10**9, threshold=1).spark_master is None
    assert choose_engine("local[2]", 1, threshold=None).spark_master == "local[2]"
