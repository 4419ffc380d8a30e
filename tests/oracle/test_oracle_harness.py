"""The Kafka harness itself: a missing jar cache is a failure that says how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import kafka


def test_missing_jars_fail_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kafka, "_JARS", tmp_path / "jars")
    with pytest.raises(kafka.KafkaJarsMissing, match="run tests/kafka/fetch.sh"):
        kafka.classpath()
    with pytest.raises(kafka.KafkaJarsMissing, match="run tests/kafka/fetch.sh"):
        kafka.dump_log(tmp_path / "00000000000000000000.log")


@pytest.mark.oracle
def test_cache_is_complete_and_kafka_runs() -> None:
    assert kafka.classpath().endswith("*")
    cluster_id = kafka.random_cluster_id()
    assert len(cluster_id) == 22
