"""The Spark pipeline against real parts: real ZooKeeper trees, a real local[*] Spark session.

What must hold: Spark's translate+encode output is value-for-value the in-process output (and
so `translate()` encoded); the parity join on Spark returns exactly `verify.compare`'s
differences; our own errors raised in a worker come back unchanged; Spark stays quiet.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from migrate.bulk.pipeline import compare_spark, encode_log
from migrate.bulk.spark import SparkRuntime
from migrate.bulk.spark_start import SparkStarter
from migrate.cli.exit_codes import exit_code_for
from migrate.errors import SparkError, TranslationError
from migrate.translate.framing import TranslationOptions, parse_target_version
from migrate.translate.translation import translate
from samples import SampleSpec
from verify import compare, expected_image, load_records
from writers import SchemaError, encode_record
from zkreader import (
    ClusterSnapshot,
    ConfigZnode,
    ConnectOptions,
    PartitionState,
    open_session,
    read_cluster,
)

pytestmark = pytest.mark.slow


# These two start their own session: they run before the shared module session exists
# (one SparkContext per process).


def test_bad_master_is_a_spark_error_naming_it(tmp_path: Path) -> None:
    starter = SparkStarter("nosuchscheme://nowhere:1", temp_root=tmp_path).start()
    try:
        with pytest.raises(SparkError, match="nosuchscheme://nowhere:1") as info:
            starter.get(timeout=240)
        assert exit_code_for(info.value) == 3
        assert "Master must" in str(info.value)  # the JVM's own reason
        kept = list(tmp_path.glob("zk2kraft-spark-*/jvm.out"))
        assert kept and str(kept[0]) in str(info.value)  # the log is kept and named
    finally:
        starter.stop()


def test_spark_start_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    starter = SparkStarter("local[1]").start()
    try:
        runtime = starter.get(timeout=240)
        assert runtime.map_chunks([[1, 2], [3]], sum) == [3, 3]
        assert runtime.jvm_peak_rss_bytes() is not None
    finally:
        starter.stop()
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkRuntime]:
    import sys

    from pyspark import cloudpickle

    # this module's helper functions are shipped to the workers by value (they cannot import it)
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    starter = SparkStarter("local[2]").start()
    try:
        runtime = starter.get(timeout=240)  # SparkError (a failure, not a skip) if it cannot
        yield runtime
    finally:
        starter.stop()


def _read(connect: str) -> ClusterSnapshot:
    with open_session(ConnectOptions(connect)) as session:
        return read_cluster(session, watch=False)


SHAPES = {
    "clean": SampleSpec.clean(topics=40, partitions_per_topic=25),
    "warnings": SampleSpec.clean(
        topics=12, partitions_per_topic=5, brokers=4, pending_deletion=True,
        in_flight_reassignment=True, missing_partition_state=True, recovering_partition=True,
        offline_partition=True,
    ),
    "topic-without-id": SampleSpec.clean(topics=6, partitions_per_topic=3,
                                         topic_without_id=True),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("mv", ["3.5-IV2", "3.9-IV0"])
def test_spark_output_equals_in_process_and_translate(
    spark: SparkRuntime, sample_cluster: Callable[..., Any], shape: str, mv: str
) -> None:
    cluster = sample_cluster(SHAPES[shape])
    snapshot = _read(cluster.connect)
    options = TranslationOptions(metadata_version=parse_target_version(mv))
    on_spark = encode_log(snapshot, options, spark=spark)
    in_process = encode_log(snapshot, options)
    reference = translate(snapshot, options)
    assert on_spark.engine == "spark"
    assert on_spark.values == in_process.values == [encode_record(r) for r in reference.records]
    assert on_spark.counts == in_process.counts == reference.counts
    assert on_spark.blockers == in_process.blockers
    if shape == "clean":
        assert on_spark.counts["PARTITION_RECORD"] == cluster.manifest.partitions_to_migrate


@pytest.mark.parametrize(("mv", "target"), [("3.9-IV0", "3.9"), ("4.0-IV3", "4.x")])
def test_offline_spark_output_equals_in_process_and_translate(
    spark: SparkRuntime, sample_cluster: Callable[..., Any], mv: str, target: str
) -> None:
    """Offline, the PartitionRecords carry each replica's directory (version 1, or 2 with ELR):
    the Spark tasks must get it too (it travels with the job's function)."""
    cluster = sample_cluster(SHAPES["clean"])
    snapshot = _read(cluster.connect)
    options = TranslationOptions(metadata_version=parse_target_version(mv), offline=True,
                                 target_kafka=target)
    on_spark = encode_log(snapshot, options, spark=spark)
    in_process = encode_log(snapshot, options)
    reference = translate(snapshot, options)
    assert on_spark.values == in_process.values == [encode_record(r) for r in reference.records]
    partitions = [r for r in reference.records if r.type == "PARTITION_RECORD"]
    assert {r.version for r in partitions} == {1 if target == "3.9" else 2}
    assert all(len(r.data["directories"]) == len(r.data["replicas"]) for r in partitions)
    assert {r.data["leader"] for r in partitions} == {-1}  # every broker stopped: no leader


def test_spark_uses_several_tasks_and_keeps_topic_order(
    spark: SparkRuntime, sample_cluster: Callable[..., Any]
) -> None:
    from migrate.bulk.pipeline import chunk_topics

    cluster = sample_cluster(SampleSpec.clean(topics=60, partitions_per_topic=10))
    snapshot = _read(cluster.connect)
    assert len(chunk_topics(snapshot, parallelism=spark.default_parallelism)) >= 2  # tasks
    out = encode_log(snapshot, TranslationOptions(), spark=spark)
    records = translate(snapshot, TranslationOptions()).records
    topic_names = [r.data["name"] for r in records if r.type == "TOPIC_RECORD"]
    assert topic_names == sorted(topic_names) and len(topic_names) == 60
    assert out.values == [encode_record(r) for r in records]


def test_worker_errors_come_back_as_our_errors(spark: SparkRuntime) -> None:
    from migrate.bulk.pipeline import topic_table
    from zkreader import ClusterIdZnode, Topic, ZnodeStat

    stat = ZnodeStat(1, 1, 0, 1, 1)
    bad_config = ConfigZnode("topics/t", {"cleanup.policy": 7}, stat)  # type: ignore[dict-item]
    topic = Topic("t", 3, "AAAAAAAAAAAAAAAAAAAAAQ", {0: (1,)}, {}, {}, stat)
    state = PartitionState("t", 0, 1, 0, 0, (1,), 0, stat)
    snapshot = ClusterSnapshot(cluster_id=ClusterIdZnode("q1Sh-9_ISia_zwGINzRvyQ", stat),
                               topics={"t": topic}, partition_states={("t", 0): state},
                               topic_configs={"t": bad_config})
    assert [config for _, _, config, _ in topic_table(snapshot)] == [{"cleanup.policy": 7}]
    options = TranslationOptions(metadata_version=parse_target_version("3.9-IV0"))
    with pytest.raises(SchemaError) as in_process:  # an error of ours, with an exit code
        encode_log(snapshot, options)
    with pytest.raises(type(in_process.value)) as on_spark:
        encode_log(snapshot, options, spark=spark)  # raised in a mapInArrow task
    assert str(on_spark.value) == str(in_process.value)
    assert exit_code_for(on_spark.value) == exit_code_for(in_process.value) == 2  # bad data


def test_non_project_worker_error_is_a_spark_error(spark: SparkRuntime) -> None:
    with pytest.raises(SparkError, match="ZeroDivisionError") as info:
        spark.map_chunks([1, 0], _reciprocal)
    assert exit_code_for(info.value) == 3
    spark.failed = False  # the session itself is still healthy
    assert spark.map_chunks([1, 2, 4], _reciprocal) == [1.0, 0.5, 0.25]


def _reciprocal(x: int) -> float:
    return 1 / x


def test_translation_error_keeps_its_class(spark: SparkRuntime) -> None:
    with pytest.raises(TranslationError, match="/brokers/topics/x"):
        spark.map_chunks([1], _translation_error)


def _translation_error(_: int) -> None:
    raise TranslationError("/brokers/topics/x: bad")


def test_parity_on_spark_equals_compare(
    spark: SparkRuntime, sample_cluster: Callable[..., Any]
) -> None:
    cluster = sample_cluster(SampleSpec.clean(topics=15, partitions_per_topic=4))
    snapshot = _read(cluster.connect)
    zk_image = expected_image(snapshot)
    quorum = load_records(translate(snapshot, TranslationOptions()).records).image
    assert compare(zk_image, quorum) == []
    assert compare_spark(zk_image, quorum, spark) == []

    # drift: one partition's ISR and leader, a topic gone, a new topic, a config value
    name = sorted(snapshot.topics)[0]
    gone = sorted(snapshot.topics)[1]
    state = snapshot.partition_states[(name, 0)]
    states = dict(snapshot.partition_states)
    states[(name, 0)] = dataclasses.replace(state, isr=state.isr[:1], leader=state.isr[-1])
    topics = {n: t for n, t in snapshot.topics.items() if n != gone}
    newt = dataclasses.replace(snapshot.topics[name], name="zz-new",
                               topic_id="AAAAAAAAAAAAAAAAAAAAAg")
    topics["zz-new"] = newt
    configs = dict(snapshot.topic_configs)
    configs[name] = ConfigZnode(f"topics/{name}", {"retention.ms": "1"}, state.stat)
    drifted = dataclasses.replace(snapshot, topics=topics, partition_states=states,
                                  topic_configs=configs)
    expected = compare(expected_image(drifted), quorum)
    got = compare_spark(expected_image(drifted), quorum, spark)
    assert len(expected) >= 4
    assert got == expected
    assert {d.kind for d in got} >= {"partition", "topic"}
