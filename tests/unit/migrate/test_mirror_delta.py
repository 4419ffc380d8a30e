"""LogState: the record-identity view of the log the mirror falls back to after a session
expiry or a resume past the fence. Expected records are written by hand from Kafka's record
definitions (a deleted config key is a ConfigRecord with a null value, a deleted quota key a
ClientQuotaRecord with remove=true, a topic goes with RemoveTopicRecord, ...)."""

from __future__ import annotations

from migrate._mirror_delta import LogState
from writers import MetadataRecord

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"
T2 = "AAAAAAAAAAAAAAAAAAAAAg"


def topic(tid: str, name: str) -> MetadataRecord:
    return MetadataRecord("TOPIC_RECORD", 0, {"name": name, "topicId": tid})


def part(tid: str, p: int, leader: int, isr: list[int], epoch: int = 0, pepoch: int = 0
         ) -> MetadataRecord:
    return MetadataRecord("PARTITION_RECORD", 0, {
        "partitionId": p, "topicId": tid, "replicas": [1, 2], "isr": isr,
        "removingReplicas": [], "addingReplicas": [], "leader": leader, "leaderEpoch": epoch,
        "partitionEpoch": pepoch})


def config(name: str, key: str, value: str | None) -> MetadataRecord:
    return MetadataRecord("CONFIG_RECORD", 0, {"resourceType": 2, "resourceName": name,
                                               "name": key, "value": value})


def quota(client: str, value: float, remove: bool = False) -> MetadataRecord:
    return MetadataRecord("CLIENT_QUOTA_RECORD", 0, {
        "entity": [{"entityType": "client-id", "entityName": client}],
        "key": "producer_byte_rate", "value": value, "remove": remove})


def types(records: list[MetadataRecord]) -> list[tuple[str, object]]:
    return [(r.type, r.data.get("topicId", r.data.get("name", r.data.get("key"))))
            for r in records]


BASE = [
    MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
    MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": "ZK Migration"}),
    topic(T1, "a"), config("a", "retention.ms", "1"), part(T1, 0, 1, [1, 2]),
    topic(T2, "b"), part(T2, 0, 2, [2]),
    quota("app", 10.0),
]


def test_nothing_changed_gives_no_records_and_the_transaction_is_seen_open() -> None:
    s = LogState()
    s.apply(BASE)
    assert s.transaction_open and s.migration_state is None
    assert s.delta_to(BASE) == []


def test_changes_removals_and_order() -> None:
    s = LogState()
    s.apply(BASE)
    target = [
        BASE[0],
        topic(T1, "a"), part(T1, 0, 2, [2], epoch=1, pepoch=1), part(T1, 1, 1, [1, 2]),
        # topic b deleted, config key of a deleted, quota removed
    ]
    got = s.delta_to(target)
    assert types(got) == [
        ("REMOVE_TOPIC_RECORD", T2),                           # topic removals come first
        ("PARTITION_RECORD", T1), ("PARTITION_RECORD", T1),    # changed, then added partition
        ("CONFIG_RECORD", "retention.ms"),                     # then other removals: config key
        ("CLIENT_QUOTA_RECORD", "producer_byte_rate"),         # and quota key
    ]
    removed_quota = next(r for r in got if r.type == "CLIENT_QUOTA_RECORD")
    assert removed_quota.data["remove"] is True
    deleted_key = next(r for r in got if r.type == "CONFIG_RECORD")
    assert deleted_key.data["value"] is None
    assert s.delta_to(target) == []  # the state now holds the target


def test_a_topic_recreated_under_the_same_name_gets_its_configs_again() -> None:
    s = LogState()
    s.apply(BASE)
    target = [topic(T2, "b"), part(T2, 0, 2, [2]), quota("app", 10.0),
              MetadataRecord("TOPIC_RECORD", 0, {"name": "a", "topicId": "AAAAAAAAAAAAAAAAAAAAAw"}),
              config("a", "retention.ms", "1"), part("AAAAAAAAAAAAAAAAAAAAAw", 0, 1, [1, 2])]
    got = s.delta_to(target + [BASE[0]])
    assert [r.type for r in got] == ["REMOVE_TOPIC_RECORD", "TOPIC_RECORD", "CONFIG_RECORD",
                                     "PARTITION_RECORD"]


def test_a_partition_change_record_merges_as_kafka_replays_it() -> None:
    s = LogState()
    s.apply(BASE)
    s.apply([MetadataRecord("PARTITION_CHANGE_RECORD", 0, {
        "partitionId": 0, "topicId": T1, "isr": [1], "leader": 1})])
    # leader set: leader epoch + 1; every change: partition epoch + 1
    assert s.delta_to([*BASE[:2], BASE[2], BASE[3], part(T1, 0, 1, [1], epoch=1, pepoch=1),
                       *BASE[5:]]) == []


def test_closing_records_are_seen() -> None:
    s = LogState()
    s.apply(BASE + [MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 1}),
                    MetadataRecord("END_TRANSACTION_RECORD", 0, {})])
    assert not s.transaction_open and s.migration_state == 1
