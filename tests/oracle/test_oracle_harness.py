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


@pytest.mark.oracle
def test_format_takes_a_cluster_id_that_starts_with_a_dash(tmp_path: Path) -> None:
    """One random cluster id in 64 starts with `-`; `format -t -aN2G…` failed a CI run so.

    `plan` prints `--cluster-id=ID` and the harness passes it the same way; Kafka must read it.
    """
    config = tmp_path / "controller.properties"
    config.write_text(
        "process.roles=controller\nnode.id=3001\n"
        "controller.quorum.voters=3001@127.0.0.1:19093\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=CONTROLLER://127.0.0.1:19093\nlog.dirs={tmp_path / 'meta'}\n")
    kafka.storage_format(config, "-aN2GKttSay9PdcWp178ow", release_version="3.9-IV0")
    meta = (tmp_path / "meta" / "meta.properties").read_text()
    assert "cluster.id=-aN2GKttSay9PdcWp178ow" in meta.splitlines()
