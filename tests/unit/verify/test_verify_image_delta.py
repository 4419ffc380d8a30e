"""Images and deltas: image → records → replay == image for every entity kind, each record
type's replay, and the router's rules (unknown types raise, RemoveTopic is split, ...)."""

from __future__ import annotations

import pytest

from verify import MetadataDelta, MetadataImage, ReplayError, UnknownRecordTypeError
from verify.delta import RECORD_TYPES
from verify.image import (
    MIGRATING_DIRECTORY,
    AclsImage,
    BrokerEndpoint,
    BrokerRegistration,
    ClientQuotasImage,
    ClusterImage,
    ConfigsImage,
    ControllerRegistration,
    DelegationTokenData,
    DelegationTokensImage,
    FeaturesImage,
    FrozenMap,
    PartitionImage,
    ProducerIdsImage,
    ScramCredential,
    ScramImage,
    StandardAcl,
    TopicImage,
    TopicsImage,
)
from writers import MetadataRecord

T1 = "AAAAAAAAAAAAAAAAAAAAAQ"
T2 = "AAAAAAAAAAAAAAAAAAAAAg"
ACL1 = "AAAAAAAAAAAAAAAAAAAAAw"


def R(kind: str, version: int = 0, **data: object) -> MetadataRecord:  # noqa: N802
    return MetadataRecord(kind, version, data)  # type: ignore[arg-type]


def part(replicas: tuple[int, ...], **kw: object) -> PartitionImage:
    return PartitionImage(replicas=replicas, isr=replicas, leader=replicas[0],
                          directories=(MIGRATING_DIRECTORY,) * len(replicas),
                          **kw)  # type: ignore[arg-type]


def full_image() -> MetadataImage:
    topics = {
        T1: TopicImage("orders", T1, FrozenMap({0: part((1, 2), leader_epoch=3,
                                                        partition_epoch=7),
                                                1: part((2, 3), adding_replicas=(4,),
                                                        removing_replicas=(3,),
                                                        leader_recovery_state=1)})),
        T2: TopicImage("events", T2, FrozenMap({0: part((3,))})),
    }
    endpoint = BrokerEndpoint("PLAINTEXT", "h1", 9092, 0)
    return MetadataImage(
        features=FeaturesImage(FrozenMap({"metadata.version": 21, "kraft.version": 1})),
        cluster=ClusterImage(
            FrozenMap({b: BrokerRegistration(b, 100 + b, "AAAAAAAAAAAAAAAAAAAABA", (endpoint,),
                                             FrozenMap({"metadata.version": (21, 21)}),
                                             "r1" if b == 1 else None, True, False, True)
                       for b in (1, 2, 3)}),
            FrozenMap({9: ControllerRegistration(9, "AAAAAAAAAAAAAAAAAAAABQ", True,
                                                 (endpoint,), FrozenMap())}),
        ),
        topics=TopicsImage(FrozenMap(topics), FrozenMap({t.name: t for t in topics.values()})),
        configs=ConfigsImage(FrozenMap({(2, "orders"): FrozenMap({"retention.ms": "1"}),
                                        (4, ""): FrozenMap({"a": "b"}),
                                        (4, "1"): FrozenMap({"c": "d"})})),
        client_quotas=ClientQuotasImage(FrozenMap({
            (("user", "alice"),): FrozenMap({"producer_byte_rate": 1024.0}),
            (("client-id", None), ("user", None)): FrozenMap({"request_percentage": 5.0}),
        })),
        scram=ScramImage(FrozenMap({("alice", 1): ScramCredential(b"s", b"k", b"v", 4096)})),
        acls=AclsImage(FrozenMap({ACL1: StandardAcl(2, "orders", 3, "User:a", "*", 3, 3)})),
        producer_ids=ProducerIdsImage(6000, 2, -1),
        delegation_tokens=DelegationTokensImage(FrozenMap({"t": DelegationTokenData(
            "t", "User:a", "User:a", ("User:b",), 1, 3, 2)})),
        zk_migration_state=1,
    )


def replay(records: list[MetadataRecord], base: MetadataImage | None = None) -> MetadataImage:
    delta = MetadataDelta(base)
    for r in records:
        delta.replay(r)
    return delta.apply()


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_round_trip_full_image(version: int) -> None:
    img = full_image()
    got = replay(img.records(broker_version=version))
    if version < 2:  # older RegisterBrokerRecords cannot say isMigratingZkBroker
        assert {b.is_migrating_zk_broker for b in got.cluster.brokers.values()} == {False}
        assert got.topics == img.topics and got.scram == img.scram
        return
    assert got == img


def test_round_trip_empty_image() -> None:
    assert MetadataImage.EMPTY.records() == []
    assert replay([]) == MetadataImage.EMPTY


def test_records_start_with_metadata_version_and_topics_precede_configs() -> None:
    types = [r.type for r in full_image().records()]
    assert types[0] == "FEATURE_LEVEL_RECORD"
    assert full_image().records()[0].data["name"] == "metadata.version"
    t = types.index("TOPIC_RECORD")
    assert types.index("REGISTER_BROKER_RECORD") < t < types.index("CONFIG_RECORD")


def test_every_schema_type_has_a_route() -> None:
    assert len(RECORD_TYPES) == 25  # apiKeys 0-27 minus the three unused ones


def test_unknown_type_raises_naming_it() -> None:
    with pytest.raises(UnknownRecordTypeError, match="ACCESS_CONTROL_RECORD"):
        MetadataDelta().replay(R("ACCESS_CONTROL_RECORD"))


def test_no_op_changes_nothing_and_transaction_markers_belong_to_the_loader() -> None:
    img = full_image()
    assert replay([R("NO_OP_RECORD")], img) == img
    with pytest.raises(ReplayError, match="loader"):
        MetadataDelta().replay(R("BEGIN_TRANSACTION_RECORD", name="x"))


def test_untouched_sub_images_are_reused() -> None:
    img = full_image()
    got = replay([R("CONFIG_RECORD", resourceType=4, resourceName="1", name="c", value="e")],
                 img)
    assert got.topics is img.topics and got.scram is img.scram
    assert got.configs.resources[(4, "1")] == {"c": "e"}


def test_remove_topic_removes_its_configs_and_unknown_id_raises() -> None:
    img = full_image()
    got = replay([R("REMOVE_TOPIC_RECORD", topicId=T1)], img)
    assert "orders" not in got.topics.by_name and T1 not in got.topics.by_id
    assert (2, "orders") not in got.configs.resources
    assert got.topics.by_name["events"] is img.topics.by_name["events"]
    with pytest.raises(ReplayError, match=f"REMOVE_TOPIC_RECORD: unknown topic id {T1}"):
        replay([R("REMOVE_TOPIC_RECORD", topicId=T1)], got)


def test_topic_created_and_deleted_in_one_delta_leaves_no_trace() -> None:
    img = full_image()
    got = replay([R("TOPIC_RECORD", name="tmp", topicId="AAAAAAAAAAAAAAAAAAAACA"),
                  R("PARTITION_RECORD", partitionId=0, topicId="AAAAAAAAAAAAAAAAAAAACA",
                    replicas=[1], isr=[1], leader=1),
                  R("REMOVE_TOPIC_RECORD", topicId="AAAAAAAAAAAAAAAAAAAACA")], img)
    assert got.topics == img.topics


def test_partition_record_defaults_and_directories() -> None:
    got = replay([R("TOPIC_RECORD", name="x", topicId=T1),
                  R("PARTITION_RECORD", partitionId=0, topicId=T1, replicas=[1, 2], isr=[1],
                    leader=1, leaderEpoch=0, partitionEpoch=0),
                  R("PARTITION_RECORD", 1, partitionId=1, topicId=T1, replicas=[2],
                    isr=[2], leader=2, directories=["AAAAAAAAAAAAAAAAAAAAZg"])])
    p0, p1 = (got.topics.by_name["x"].partitions[i] for i in (0, 1))
    assert p0.directories == (MIGRATING_DIRECTORY, MIGRATING_DIRECTORY)
    assert (p0.leader_recovery_state, p0.adding_replicas) == (0, ())
    assert p1.directories == ("AAAAAAAAAAAAAAAAAAAAZg",)
    with pytest.raises(ReplayError, match="unknown topic id"):
        replay([R("PARTITION_RECORD", partitionId=0, topicId=T2, replicas=[1])])


def test_partition_change_merges_like_kafka() -> None:
    img = full_image()
    got = replay([R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=T1, isr=[1])], img)
    p = got.topics.by_id[T1].partitions[0]
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1,), 1, 3, 8)
    got = replay([R("PARTITION_CHANGE_RECORD", partitionId=0, topicId=T1, leader=2,
                    leaderRecoveryState=1, replicas=[2, 3, 4])], got)
    p = got.topics.by_id[T1].partitions[0]
    assert (p.leader, p.leader_epoch, p.partition_epoch, p.leader_recovery_state) == (2, 4, 9, 1)
    assert len(p.directories) == 3
    assert got.topics.by_id[T1].partitions[1] is img.topics.by_id[T1].partitions[1]
    with pytest.raises(ReplayError, match="unknown partition 7"):
        replay([R("PARTITION_CHANGE_RECORD", partitionId=7, topicId=T1, isr=[1])], img)


def test_broker_fence_unfence_change_and_unregister() -> None:
    img = full_image()
    got = replay([R("UNFENCE_BROKER_RECORD", id=1, epoch=101)], img)
    assert got.cluster.brokers[1].fenced is False
    got = replay([R("FENCE_BROKER_RECORD", id=1, epoch=101)], got)
    assert got.cluster.brokers[1].fenced is True
    got = replay([R("BROKER_REGISTRATION_CHANGE_RECORD", 1, brokerId=2, brokerEpoch=102,
                    fenced=-1, inControlledShutdown=1)], got)
    assert (got.cluster.brokers[2].fenced, got.cluster.brokers[2].in_controlled_shutdown) == (
        False, True)
    with pytest.raises(ReplayError, match="epoch 101, not 5"):
        replay([R("FENCE_BROKER_RECORD", id=1, epoch=5)], img)
    with pytest.raises(ReplayError, match="no broker registration found for broker 8"):
        replay([R("UNFENCE_BROKER_RECORD", id=8, epoch=5)], img)
    got = replay([R("UNREGISTER_BROKER_RECORD", brokerId=3, brokerEpoch=103)], img)
    assert 3 not in got.cluster.brokers


def test_config_null_value_deletes_and_empty_resource_disappears() -> None:
    got = replay([R("CONFIG_RECORD", resourceType=4, resourceName="1", name="c", value=None)],
                 full_image())
    assert (4, "1") not in got.configs.resources


def test_quota_remove_scram_remove_acl_remove_token_remove() -> None:
    img = full_image()
    got = replay([
        R("CLIENT_QUOTA_RECORD", entity=[{"entityType": "user", "entityName": "alice"}],
          key="producer_byte_rate", value=0.0, remove=True),
        R("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", name="alice", mechanism=1),
        R("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", id=ACL1),
        R("REMOVE_DELEGATION_TOKEN_RECORD", tokenId="t"),
    ], img)
    assert (("user", "alice"),) not in got.client_quotas.entities
    assert not got.scram.credentials and not got.acls.acls and not got.delegation_tokens.tokens
    with pytest.raises(ReplayError, match=f"no ACL with id {ACL1}"):
        replay([R("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", id=ACL1)], got)


def test_feature_level_zero_removes_feature_and_migration_state() -> None:
    got = replay([R("FEATURE_LEVEL_RECORD", name="kraft.version", featureLevel=0),
                  R("ZK_MIGRATION_STATE_RECORD", zkMigrationState=3),
                  R("PRODUCER_IDS_RECORD", brokerId=1, brokerEpoch=5, nextProducerId=7000)],
                 full_image())
    assert got.features.levels == {"metadata.version": 21}
    assert got.zk_migration_state == 3 and got.producer_ids.next_producer_id == 7000


def test_register_controller_record() -> None:
    got = replay([R("REGISTER_CONTROLLER_RECORD", controllerId=3000,
                    incarnationId="AAAAAAAAAAAAAAAAAAAABg", zkMigrationReady=True,
                    endPoints=[{"name": "CONTROLLER", "host": "c", "port": 9093,
                                "securityProtocol": 0}], features=[])])
    c = got.cluster.controllers[3000]
    assert c.zk_migration_ready and c.endpoints[0].name == "CONTROLLER"


def test_finish_snapshot_deletes_what_it_did_not_mention() -> None:
    img = full_image()
    delta = MetadataDelta(img)
    for r in [R("FEATURE_LEVEL_RECORD", name="metadata.version", featureLevel=21),
              R("TOPIC_RECORD", name="events", topicId=T2),
              R("PARTITION_RECORD", partitionId=0, topicId=T2, replicas=[3], isr=[3], leader=3)]:
        delta.replay(r)
    delta.finish_snapshot()
    got = delta.apply()
    assert set(got.topics.by_name) == {"events"} and not got.configs.resources
    assert not got.cluster.brokers and not got.scram.credentials and not got.acls.acls
    assert got.features.levels == {"metadata.version": 21}


def test_missing_field_is_a_replay_error_naming_the_type() -> None:
    with pytest.raises(ReplayError, match="TOPIC_RECORD: missing field 'topicId'"):
        MetadataDelta().replay(R("TOPIC_RECORD", name="x"))


def test_scram_credential_repr_hides_secret() -> None:
    cred = ScramCredential(b"salty", b"stored", b"server", 4096)
    assert "salty" not in repr(cred) and "stored" not in repr(full_image().scram)


@pytest.mark.parametrize("version", [2, 3])
def test_round_trip_through_the_real_codec(version: int) -> None:
    """image → records → Kafka bytes → records → replay == image: field names agree with the
    codec's schema table, so replay cannot silently read a default where a value was written."""
    from writers import decode_record, encode_record

    img = full_image()
    decoded = [decode_record(encode_record(r)) for r in img.records(broker_version=version)]
    assert replay(decoded) == img


def test_two_new_topics_with_one_name_raise() -> None:
    with pytest.raises(ReplayError, match="topic 'x' already exists with id"):
        replay([R("TOPIC_RECORD", name="x", topicId=T1), R("TOPIC_RECORD", name="x", topicId=T2)])
    got = replay([R("TOPIC_RECORD", name="x", topicId=T1), R("REMOVE_TOPIC_RECORD", topicId=T1),
                  R("TOPIC_RECORD", name="x", topicId=T2)])
    assert got.topics.by_name["x"].topic_id == T2 and T1 not in got.topics.by_id


def test_asking_about_a_sub_delta_never_creates_it() -> None:
    delta = MetadataDelta(full_image())
    assert delta.topics_delta() is None and delta.configs_delta() is None
    assert delta.cluster_delta() is None and delta.acls_delta() is None
    assert delta.apply() == full_image()
    assert delta.topics_delta() is None  # still: apply() did not create it either
    delta.replay(R("CONFIG_RECORD", resourceType=4, resourceName="1", name="k", value="v"))
    assert delta.topics_delta() is None
    configs = delta.configs_delta()
    assert configs is not None and configs.changed_resources() == {(4, "1")}


def test_change_sets_are_public() -> None:
    img = full_image()
    delta = MetadataDelta(img)
    t3 = "AAAAAAAAAAAAAAAAAAAABA"
    t4 = "AAAAAAAAAAAAAAAAAAAABQ"
    delta.replay(R("PARTITION_CHANGE_RECORD", topicId=T1, partitionId=0, isr=[1]))
    delta.replay(R("REMOVE_TOPIC_RECORD", topicId=T2))
    delta.replay(R("TOPIC_RECORD", name="new", topicId=t3))
    delta.replay(R("TOPIC_RECORD", name="brief", topicId=t4))  # created and deleted: no trace
    delta.replay(R("REMOVE_TOPIC_RECORD", topicId=t4))
    topics = delta.topics_delta()
    assert topics is not None
    assert set(topics.changed_topics()) == {T1, t3}
    assert topics.changed_topics()[T1].changed_partitions() == {0}
    assert topics.created_topic_ids() == {t3}
    assert topics.deleted_topic_ids() == {T2}


def test_apply_records_is_replay_then_apply() -> None:
    from verify import apply_records

    img = full_image()
    records = [R("PARTITION_CHANGE_RECORD", topicId=T1, partitionId=0, leader=2)]
    got = apply_records(img, records)
    assert got.topics.by_id[T1].partitions[0].leader == 2
    assert got.topics.by_id[T1].partitions[0].leader_epoch == 4  # 3 + 1: a leader was set
    assert img.topics.by_id[T1].partitions[0].leader_epoch == 3  # the image is a value
