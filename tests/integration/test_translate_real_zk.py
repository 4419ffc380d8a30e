"""Translation of trees read back from a real ZooKeeper (sample generator -> read_cluster ->
translate): the reader's model and the translator agree on every entity kind, the historical
Kafka bugs stay fixed on real znodes, and two reads give identical records (I6)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from migrate import TranslationOptions, translate
from migrate.preflight.checks import preflight
from migrate.translate.password import encode_password
from samples import SampleCase, SampleSpec
from verify import compare, expected_image, load_records
from writers import decode_record, encode_record
from zkreader import ZkSession, read_cluster

SECRET = "integration-encoder-secret"


def of_type(records: list[Any], type_name: str) -> list[dict[str, Any]]:
    return [dict(r.data) for r in records if r.type == type_name]


def test_everything_sample_translates_with_kafkas_fixed_rules(
    sample_cluster: Callable[..., Any], zk_session_at: Callable[[str], ZkSession]
) -> None:
    sample = sample_cluster(SampleSpec.everything())
    m = sample.manifest
    # an encrypted dynamic broker password, in the form Kafka's PasswordEncoder writes it
    sample.client.set("/config/brokers/1", json.dumps({"version": 1, "config": {
        "listener.name.internal.ssl.key.password": encode_password("key-pass", SECRET),
        "log.cleaner.threads": "2",
    }}).encode())
    snap = read_cluster(zk_session_at(sample.connect), watch=False)

    result = translate(snap, TranslationOptions(password_encoder_secret=SECRET))
    records = result.records
    types = [r.type for r in records]
    assert types[:2] == ["FEATURE_LEVEL_RECORD", "BEGIN_TRANSACTION_RECORD"]
    assert types[-2:] == ["ZK_MIGRATION_STATE_RECORD", "END_TRANSACTION_RECORD"]

    # brokers: every registered one, with the znode's czxid as epoch
    brokers = of_type(records, "REGISTER_BROKER_RECORD")
    assert [b["brokerId"] for b in brokers] == sorted(snap.brokers)
    assert all(b["brokerEpoch"] == snap.brokers[b["brokerId"]].stat.czxid for b in brokers)

    # topics: ids kept, pending deletion and the id-less topic left out (the latter a blocker)
    topic_ids = {t["name"]: t["topicId"] for t in of_type(records, "TOPIC_RECORD")}
    pending = m.path(SampleCase.PENDING_DELETION).rsplit("/", 1)[1]
    no_id = m.path(SampleCase.TOPIC_WITHOUT_ID).rsplit("/", 1)[1]
    assert pending not in topic_ids and no_id not in topic_ids
    assert topic_ids == {t: i for t, i in m.topic_ids.items() if t not in (pending, no_id)}
    assert ("TOPIC_WITHOUT_ID", f"/brokers/topics/{no_id}") in [
        (b.code, b.path) for b in preflight(snap).blockers]
    assert "TOPIC_WITHOUT_ID" not in [b.code for b in result.blockers]  # reported once
    partitions = of_type(records, "PARTITION_RECORD")
    assert len(partitions) == m.partitions_to_migrate - len(snap.topics[no_id].assignment)
    by_key = {(p["topicId"], p["partitionId"]): p for p in partitions}
    for path, version in m.state_versions.items():
        parts = path.split("/")
        if parts[3] in topic_ids:
            assert by_key[(topic_ids[parts[3]], int(parts[5]))]["partitionEpoch"] == version
    missing = m.path(SampleCase.MISSING_PARTITION_STATE).split("/")
    p = by_key[(topic_ids[missing[3]], int(missing[5]))]
    assert (p["isr"], p["leader"], p["partitionEpoch"]) == (p["replicas"], p["replicas"][0], 0)
    assert any(p["addingReplicas"] or p["removingReplicas"] for p in partitions)

    # broker configs: default entity is "", the password decoded, never the ciphertext
    broker_cfg = {(c["resourceName"], c["name"]): c["value"]
                  for c in of_type(records, "CONFIG_RECORD") if c["resourceType"] == 4}
    assert broker_cfg[("1", "listener.name.internal.ssl.key.password")] == "key-pass"
    assert any(name == "" for name, _ in broker_cfg)
    assert not any(name == "<default>" for name, _ in broker_cfg)

    # quotas: desanitized, default entity null, SCRAM never as a quota
    quotas = of_type(records, "CLIENT_QUOTA_RECORD")
    names = {e["entityName"] for q in quotas for e in q["entity"]}
    assert "alice@example.com" in names and "alice%40example.com" not in names
    assert None in names and "<default>" not in names and "" not in names
    assert not any(q["key"].startswith("SCRAM-") for q in quotas)
    assert any(len(q["entity"]) == 2 for q in quotas)
    scram = of_type(records, "USER_SCRAM_CREDENTIAL_RECORD")
    assert {(s["name"], s["mechanism"]) for s in scram} == {
        ("alice@example.com", 1), ("alice@example.com", 2), ("bob", 2)}

    # producer ids: the next block, never the one already handed out (KAFKA-15552)
    [pid] = of_type(records, "PRODUCER_IDS_RECORD")
    assert pid["nextProducerId"] == 6000

    # ACLs from both stores; tokens desanitized
    acls = of_type(records, "ACCESS_CONTROL_ENTRY_RECORD")
    assert {a["patternType"] for a in acls} == {3, 4}
    [token] = of_type(records, "DELEGATION_TOKEN_RECORD")
    assert token["owner"] == "User:alice@example.com" and token["renewers"] == ["User:bob"]

    # the codec takes every record, and no SCRAM secret leaks into a finding
    for record in records:
        assert decode_record(encode_record(record)).type == record.type
    findings = repr(result.blockers) + repr(result.warnings)
    assert not any(secret in findings for secret in m.secrets)

    # replayed by verify's loader, the records give the image verify expects from ZooKeeper
    differences = compare(expected_image(snap), load_records(records).image)
    # the id-less topic is out of both (one rule, zkreader.migrating_topic; pre-flight blocks it)
    assert differences == []

    # I6: a second read of the same tree gives the identical record list
    again = translate(read_cluster(zk_session_at(sample.connect), watch=False),
                      TranslationOptions(password_encoder_secret=SECRET))
    assert again.records == records
