"""Unit tests of the pre-flight rules, one constructed snapshot per rule (no ZooKeeper)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from migrate.preflight.checks import (
    PlanSummary,
    PreflightReport,
    migrated_partition_count,
    preflight,
    standin_summary,
    summarize,
)
from migrate.preflight.findings import Finding
from zkreader import (
    Broker,
    BrokerEndpoint,
    ClusterIdZnode,
    ClusterSnapshot,
    ControllerZnode,
    LogDirEvent,
    MigrationZnode,
    PartitionState,
    Topic,
    ZnodeStat,
)

STAT = ZnodeStat(czxid=10, mzxid=11, version=3, ctime_ms=1, mtime_ms=2)
EPHEMERAL = replace(STAT, ephemeral_owner=0x1234)


def broker(i: int, *listeners: str) -> Broker:
    """A registration advertising `listeners` (PLAINTEXT when none are named)."""
    endpoints = tuple(BrokerEndpoint(name, f"b{i}", 9092 + n, "PLAINTEXT")
                      for n, name in enumerate(listeners or ("PLAINTEXT",)))
    return Broker(i, 5, endpoints, None, -1, 0, {}, EPHEMERAL)


def topic(name: str, assignment: dict[int, tuple[int, ...]], **kw: object) -> Topic:
    fields: dict[str, object] = {
        "json_version": 3,
        "topic_id": "AAAAAAAAAAAAAAAAAAAAAQ",
        "adding_replicas": {},
        "removing_replicas": {},
        "stat": STAT,
    }
    fields.update(kw)
    return Topic(name=name, assignment=assignment, **fields)  # type: ignore[arg-type]


def state(t: str, p: int, leader: int, isr: tuple[int, ...], lrs: int = 0) -> PartitionState:
    return PartitionState(t, p, leader, 4, 7, isr, lrs, STAT)


def clean(**kw: object) -> ClusterSnapshot:
    """A healthy 3-broker cluster with one topic of two partitions."""
    base = ClusterSnapshot(
        cluster_id=ClusterIdZnode("ABCDEFGHIJKLMNOPQRSTUV", STAT),
        controller=ControllerZnode(1, 2, 0, -1, EPHEMERAL),
        brokers={i: broker(i) for i in (1, 2, 3)},
        topics={"orders": topic("orders", {0: (1, 2, 3), 1: (2, 3, 1)})},
        partition_states={
            ("orders", 0): state("orders", 0, 1, (1, 2, 3)),
            ("orders", 1): state("orders", 1, 2, (2, 3, 1)),
        },
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def codes(findings: tuple[Finding, ...]) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in findings]


def test_clean_cluster_has_no_findings() -> None:
    report = preflight(clean())
    assert report == PreflightReport((), ())
    assert report.ok


def test_topic_without_id_is_a_blocker_naming_the_topic_znode() -> None:
    snap = clean(topics={"old": topic("old", {0: (1,)}, topic_id=None)},
                 partition_states={("old", 0): state("old", 0, 1, (1,))})
    report = preflight(snap)
    assert codes(report.blockers) == [("TOPIC_WITHOUT_ID", "/brokers/topics/old")]
    assert not report.ok


def test_topic_without_id_pending_deletion_is_not_a_blocker() -> None:
    snap = clean(topics={"old": topic("old", {0: (1,)}, topic_id=None)},
                 pending_deletions=frozenset({"old"}))
    report = preflight(snap)
    assert report.blockers == ()
    assert codes(report.warnings) == [("TOPIC_PENDING_DELETION", "/admin/delete_topics/old")]


def test_log_dir_events_block_and_name_the_broker() -> None:
    events = (
        LogDirEvent("log_dir_event_0000000002", 3, 1, STAT),
        LogDirEvent("log_dir_event_0000000001", 2, 1, STAT),
    )
    report = preflight(clean(log_dir_events=events))
    assert codes(report.blockers) == [
        ("LOG_DIR_EVENT_PENDING", "/log_dir_event_notification/log_dir_event_0000000001"),
        ("LOG_DIR_EVENT_PENDING", "/log_dir_event_notification/log_dir_event_0000000002"),
    ]
    assert "broker 2" in report.blockers[0].message
    assert "broker 3" in report.blockers[1].message


@pytest.mark.parametrize("where", ["assignment", "adding", "removing"])
def test_unregistered_broker_in_assignment_is_a_blocker(where: str) -> None:
    assignment = {0: (1, 2, 9) if where == "assignment" else (1, 2)}
    kw: dict[str, object] = {}
    if where == "adding":
        kw["adding_replicas"] = {0: (9,)}
    if where == "removing":
        kw["removing_replicas"] = {0: (9,)}
    snap = clean(topics={"t": topic("t", assignment, **kw)},
                 partition_states={("t", 0): state("t", 0, 1, (1, 2))})
    report = preflight(snap)
    assert codes(report.blockers) == [("BROKER_NOT_REGISTERED", "/brokers/topics/t")]
    assert "9" in report.blockers[0].message


def test_migration_znode_is_a_blocker() -> None:
    report = preflight(clean(migration=MigrationZnode(3000, 5, 120, 2, STAT)))
    assert codes(report.blockers) == [("MIGRATION_ZNODE_EXISTS", "/migration")]


@pytest.mark.parametrize(
    ("epoch", "owner"), [(4, 0x1234), (-1, 0), (0, 0)], ids=["epoch", "persistent", "both"]
)
def test_kraft_controller_is_a_blocker(epoch: int, owner: int) -> None:
    ctl = ControllerZnode(3000, 2, 0, epoch, replace(STAT, ephemeral_owner=owner))
    report = preflight(clean(controller=ctl))
    assert codes(report.blockers) == [("CONTROLLER_IS_KRAFT", "/controller")]


def test_zk_controller_and_no_controller_are_fine() -> None:
    assert preflight(clean(controller=None)).ok
    assert preflight(clean(controller=ControllerZnode(1, 1, 0, -1, EPHEMERAL))).ok


def test_missing_cluster_id_is_a_blocker() -> None:
    report = preflight(clean(cluster_id=None))
    assert codes(report.blockers) == [("CLUSTER_ID_MISSING", "/cluster/id")]


def test_pending_deletion_is_a_warning_and_its_partitions_are_not_judged() -> None:
    snap = clean(
        topics={**clean().topics, "gone": topic("gone", {0: (1,), 1: (7,)})},
        pending_deletions=frozenset({"gone"}),
    )  # "gone" has no states and names an unknown broker: neither is reported
    report = preflight(snap)
    assert report.blockers == ()
    assert codes(report.warnings) == [("TOPIC_PENDING_DELETION", "/admin/delete_topics/gone")]
    assert migrated_partition_count(snap) == 2


def test_reassignment_in_flight_is_a_warning_on_the_topic_znode() -> None:
    t = topic("r", {0: (1, 2, 3), 1: (1, 2)}, adding_replicas={0: (3,)},
              removing_replicas={0: (1,)})
    snap = clean(topics={"r": t}, partition_states={
        ("r", 0): state("r", 0, 1, (1, 2)), ("r", 1): state("r", 1, 1, (1, 2))})
    report = preflight(snap)
    assert codes(report.warnings) == [("REASSIGNMENT_IN_FLIGHT", "/brokers/topics/r")]
    assert "0" in report.warnings[0].message


def test_missing_partition_state_warns_with_kafkas_default() -> None:
    snap = clean(partition_states={("orders", 0): state("orders", 0, 1, (1, 2, 3))})
    report = preflight(snap)
    assert codes(report.warnings) == [
        ("PARTITION_STATE_MISSING", "/brokers/topics/orders/partitions/1/state")
    ]
    assert "leader = first replica 2" in report.warnings[0].message


@pytest.mark.parametrize(
    ("leader", "isr", "lrs", "expected"),
    [
        (-1, (1,), 0, ["PARTITION_OFFLINE"]),
        (-1, (), 0, ["PARTITION_OFFLINE"]),
        (3, (1, 2), 0, ["LEADER_NOT_IN_ISR"]),
        (1, (1, 5), 0, ["ISR_NOT_IN_REPLICAS"]),
        (1, (1,), 1, ["LEADER_RECOVERING"]),
        (3, (1, 5), 1, ["LEADER_NOT_IN_ISR", "ISR_NOT_IN_REPLICAS", "LEADER_RECOVERING"]),
    ],
)
def test_partition_state_warnings(
    leader: int, isr: tuple[int, ...], lrs: int, expected: list[str]
) -> None:
    snap = clean(partition_states={
        ("orders", 0): state("orders", 0, leader, isr, lrs),
        ("orders", 1): state("orders", 1, 2, (2, 3, 1)),
    })
    report = preflight(snap)
    assert report.blockers == ()
    path = "/brokers/topics/orders/partitions/0/state"
    assert codes(report.warnings) == [(code, path) for code in expected]


def test_with_blockers_appends_and_deduplicates() -> None:
    report = preflight(clean(migration=MigrationZnode(1, 1, 1, 1, STAT)))
    extra = [
        Finding("MIGRATION_ZNODE_EXISTS", "dup", "/migration"),
        Finding("ENCRYPTED_PASSWORD_WITHOUT_SECRET", "x", "/config/brokers/1"),
    ]
    merged = report.with_blockers(extra)
    assert codes(merged.blockers) == [
        ("MIGRATION_ZNODE_EXISTS", "/migration"),
        ("ENCRYPTED_PASSWORD_WITHOUT_SECRET", "/config/brokers/1"),
    ]


def test_plan_summary_json_is_the_designs_document() -> None:
    report = preflight(clean(cluster_id=None, partition_states={}))
    doc = PlanSummary(report, {"TOPIC_RECORD": 1, "PARTITION_RECORD": 2}, 3, 1, 2).to_json()
    assert list(doc) == ["blockers", "warnings", "records", "brokers", "topics", "partitions"]
    assert doc["blockers"] == [{
        "code": "CLUSTER_ID_MISSING", "message": report.blockers[0].message,
        "path": "/cluster/id"}]
    assert [w["code"] for w in doc["warnings"]] == ["PARTITION_STATE_MISSING"] * 2  # type: ignore[index, union-attr]
    assert doc["records"] == {"PARTITION_RECORD": 2, "TOPIC_RECORD": 1}
    assert (doc["brokers"], doc["topics"], doc["partitions"]) == (3, 1, 2)


def test_summarize_counts_exclude_pending_deletions() -> None:
    snap = clean(
        topics={**clean().topics, "gone": topic("gone", {0: (1,), 1: (2,), 2: (3,)})},
        pending_deletions=frozenset({"gone"}),
    )
    extra = [Finding("ENCRYPTED_PASSWORD_WITHOUT_SECRET", "x", "/config/brokers/1")]
    summary = summarize(snap, records={"TOPIC_RECORD": 1}, extra_blockers=extra)
    assert (summary.brokers, summary.topics, summary.partitions) == (3, 1, 2)
    assert codes(summary.report.blockers) == [
        ("ENCRYPTED_PASSWORD_WITHOUT_SECRET", "/config/brokers/1")]
    assert codes(summary.report.warnings) == [
        ("TOPIC_PENDING_DELETION", "/admin/delete_topics/gone")]


def test_voter_id_equal_to_a_broker_id_is_a_blocker() -> None:
    report = preflight(clean(), voter_ids=[3, 3000, 3001])
    assert codes(report.blockers) == [("VOTER_ID_IS_BROKER_ID", "/brokers/ids/3")]
    assert "--voter node id 3" in report.blockers[0].message


def test_voter_id_of_an_unregistered_assigned_broker_is_a_blocker_too() -> None:
    snap = clean(brokers={i: broker(i) for i in (1, 2)})
    report = preflight(snap, voter_ids=[3])
    assert ("VOTER_ID_IS_BROKER_ID", "/brokers/ids/3") in codes(report.blockers)


def test_distinct_voter_ids_pass() -> None:
    assert preflight(clean(), voter_ids=[100, 101, 102]).ok


def test_two_topics_with_one_id_block_on_the_later_created_naming_both() -> None:
    copied = "AAAAAAAAAAAAAAAAAAAAAQ"  # the id `topic()` gives "orders"
    snap = clean(topics={
        "orders": topic("orders", {0: (1, 2, 3)}),
        "orders.copy": topic("orders.copy", {0: (1, 2, 3)},
                             stat=replace(STAT, czxid=99)),  # created after "orders"
        "other": topic("other", {0: (1,)}, topic_id="AAAAAAAAAAAAAAAAAAAAAg"),
    })
    report = preflight(snap)
    assert codes(report.blockers) == [("DUPLICATE_TOPIC_ID", "/brokers/topics/orders.copy")]
    message = report.blockers[0].message
    assert "/brokers/topics/orders.copy" in message and "/brokers/topics/orders " in message
    assert copied in message


def test_a_copy_queued_for_deletion_is_not_a_duplicate() -> None:
    snap = clean(topics={"orders": topic("orders", {0: (1, 2, 3)}),
                         "orders.copy": topic("orders.copy", {0: (1, 2, 3)})},
                 pending_deletions=frozenset({"orders.copy"}))
    assert preflight(snap).ok


def test_brokers_sharing_no_listener_name_warn_naming_each_brokers_listeners() -> None:
    snap = clean(brokers={1: broker(1, "PLAINTEXT"), 2: broker(2, "PLAINTEXT"),
                          3: broker(3, "INTERNAL", "EXTERNAL")})
    report = preflight(snap)
    assert report.ok
    assert codes(report.warnings) == [("NO_SHARED_LISTENER", "/brokers/ids")]
    message = report.warnings[0].message
    assert "brokers 1, 2 advertise PLAINTEXT; broker 3 advertises EXTERNAL, INTERNAL" in message


def test_brokers_sharing_one_listener_name_among_others_pass() -> None:
    snap = clean(brokers={1: broker(1, "INTERNAL", "PLAINTEXT"), 2: broker(2, "INTERNAL"),
                          3: broker(3, "INTERNAL", "EXTERNAL")})
    assert preflight(snap) == PreflightReport((), ())


def test_no_shared_listener_blocks_with_the_standin() -> None:
    snap = clean(brokers={1: broker(1, "PLAINTEXT"), 2: broker(2, "PLAINTEXT"),
                          3: broker(3, "INTERNAL")})
    summary = standin_summary(summarize(snap, records={}), None)
    assert codes(summary.report.blockers) == [("NO_SHARED_LISTENER", "/brokers/ids")]
    assert summary.report.warnings == ()
    assert "--standin" in summary.report.blockers[0].message
