"""The mirror's building blocks against real ZooKeeper (issue 8, per-entity mapping).

Snapshot A is read with watches armed and bulk-translated into an image (what the log holds
after a pre-copy). Then every kind of entity changes in ZooKeeper. The notified paths become
entity keys (`changed_entities`), those entities are re-read with their watches re-armed
(`read_entities`), and `delta_records(image(A), part, keys)` is replayed onto image(A): verify's
parity against a fresh read of ZooKeeper must find no difference. A second round of changes to
the same entities proves the re-read re-armed their watches.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from kazoo.client import KazooClient

from migrate import TranslationOptions, delta_records, translate
from samples import SampleSpec
from samples._cluster import scram_credential
from verify import MetadataImage, apply_records, compare, expected_image
from zkreader import (
    ChangeEvent,
    EntityKey,
    ZkSession,
    changed_entities,
    read_cluster,
    read_entities,
)

SENTINEL = "/zz-entity-test-sentinel"


def _j(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _notified(session: ZkSession, client: KazooClient, round_no: int) -> list[ChangeEvent]:
    """Every notification of the changes made so far, by ZooKeeper's own ordering.

    ZooKeeper delivers a session's watch events in zxid order, and kazoo's feed keeps that
    order: once the sentinel's creation (made after every change) is notified, every earlier
    change's notification has been queued. No sleeping, no timing.
    """
    feed = session.changes
    events: list[ChangeEvent] = []
    path = f"{SENTINEL}-{round_no}"
    client.create(path, b"")
    while True:
        event = feed.get(timeout=30)
        assert event is not None, "no notification for the sentinel within 30 s"
        if event.path == path:
            return events
        events.append(event)


def _arm_sentinel(session: ZkSession, round_no: int) -> None:
    session.kazoo.exists(f"{SENTINEL}-{round_no}", watch=session.changes.watcher)


def _image_of(records: list[Any]) -> MetadataImage:
    return apply_records(MetadataImage.EMPTY, [r for r in records if "TRANSACTION" not in r.type])


def _state(client: KazooClient, path: str) -> tuple[dict[str, Any], int]:
    data, stat = client.get(path)
    return json.loads(data), stat.version


def test_delta_of_notified_entities_brings_the_image_to_zookeeper_now(
    sample_cluster: Callable[..., Any], zk_session_at: Callable[[str], ZkSession]
) -> None:
    sample = sample_cluster(SampleSpec.clean(topics=4, partitions_per_topic=3, brokers=3))
    zk: KazooClient = sample.client
    options = TranslationOptions()
    session = zk_session_at(sample.connect)
    before = read_cluster(session)  # arms a watch on every znode it reads
    _arm_sentinel(session, 1)
    image = _image_of(translate(before, options).records)
    assert compare(expected_image(before), image) == []

    topics = sorted(before.topics)
    t0, t1, doomed = topics[0], topics[1], topics[-1]
    users_scram = [u for u, c in before.user_configs.items() if "SCRAM-SHA-512" in c.config]
    quota_clients = sorted(before.client_configs)
    acl = before.acls[0]
    token_id = sorted(before.delegation_tokens)[0]
    leaving = max(before.brokers)
    assert users_scram and quota_clients and before.delegation_tokens and before.acls

    # -- every kind of entity changes ------------------------------------------------------
    # partition t0-0: two ISR updates before any re-read (the version moves by two)
    p0 = f"/brokers/topics/{t0}/partitions/0/state"
    for _ in range(2):
        state, version = _state(zk, p0)
        zk.set(p0, _j({**state, "isr": state["isr"][:1]}), version=version)
    # partition t0-1: one leader change (leader epoch + 1, version + 1)
    p1 = f"/brokers/topics/{t0}/partitions/1/state"
    state, version = _state(zk, p1)
    new_leader = next(r for r in state["isr"] if r != state["leader"])
    zk.set(p1, _j({**state, "leader": new_leader, "leader_epoch": state["leader_epoch"] + 1}),
           version=version)
    # a topic created (with a config), one deleted, one gains a partition
    zk.create("/config/topics/fresh", _j({"version": 1, "config": {"segment.ms": "60000"}}))
    zk.create("/brokers/topics/fresh", _j({"version": 3, "topic_id": "AAAAAAAAAAAAAAAAAAAAEA",
                                           "partitions": {"0": [1, 2]}, "adding_replicas": {},
                                           "removing_replicas": {}}))
    zk.create("/brokers/topics/fresh/partitions/0/state", _j(
        {"version": 1, "leader": 1, "leader_epoch": 0, "controller_epoch": 1, "isr": [1, 2]}),
        makepath=True)
    zk.create(f"/admin/delete_topics/{doomed}", b"", makepath=True)
    zk.delete(f"/brokers/topics/{doomed}", recursive=True)
    zk.delete(f"/config/topics/{doomed}")
    zk.delete(f"/admin/delete_topics/{doomed}")
    body = json.loads(zk.get(f"/brokers/topics/{t1}")[0])
    body["partitions"]["3"] = [2, 3]
    zk.create(f"/brokers/topics/{t1}/partitions/3/state", _j(
        {"version": 1, "leader": 2, "leader_epoch": 0, "controller_epoch": 1, "isr": [2, 3]}),
        makepath=True)
    zk.set(f"/brokers/topics/{t1}", _j(body))
    # topic config: one key set, the others deleted; a broker default config set
    zk.set(f"/config/topics/{t0}", _j({"version": 1, "config": {"retention.ms": "123"}}))
    zk.set("/config/brokers/<default>", _j({"version": 1, "config": {"num.io.threads": "9"}}))
    # quotas: one client's quota replaced by another key; SCRAM removed, a new SCRAM user
    zk.set(f"/config/clients/{quota_clients[0]}",
           _j({"version": 1, "config": {"request_percentage": "12.5"}}))
    user = users_scram[0]
    config = json.loads(zk.get(f"/config/users/{user}")[0])["config"]
    del config["SCRAM-SHA-512"]
    zk.set(f"/config/users/{user}", _j({"version": 1, "config": config}))
    cred, _ = scram_credential(99, "newbie", "SCRAM-SHA-256")
    zk.create("/config/users/newbie%40example.com",
              _j({"version": 1, "config": {"SCRAM-SHA-256": cred}}))
    # ACLs: one resource gone, one new prefixed resource
    acl_path = (f"/kafka-acl/{acl.resource_type}/{acl.name}" if acl.pattern_type == "LITERAL"
                else f"/kafka-acl-extended/prefixed/{acl.resource_type}/{acl.name}")
    zk.delete(acl_path)
    zk.create("/kafka-acl-extended/prefixed/Group/fresh-", _j({"version": 1, "acls": [
        {"principal": "User:newbie", "permissionType": "Allow", "operation": "Read",
         "host": "*"}]}), makepath=True)
    # a broker leaves, another joins; the producer-id block moves; a token goes, one comes
    zk.delete(f"/brokers/ids/{leaving}")
    zk.create("/brokers/ids/77", _j({
        "version": 5, "host": "b77", "port": 9092, "jmx_port": -1, "timestamp": "1",
        "endpoints": ["PLAINTEXT://b77:9092"], "listener_security_protocol_map": {
            "PLAINTEXT": "PLAINTEXT"}, "features": {}}), ephemeral=True)
    zk.set("/latest_producer_id_block", _j({"version": 1, "broker": 2,
                                             "block_start": "90000", "block_end": "90999"}))
    zk.delete(f"/delegation_token/tokens/{token_id}")
    zk.create("/delegation_token/tokens/fresh-token", _j({
        "version": 3, "owner": "User%3Anewbie", "tokenRequester": "User%3Anewbie",
        "renewers": [], "issueTimestamp": 1, "maxTimestamp": 3, "expiryTimestamp": 2,
        "tokenId": "fresh-token"}))

    # -- the mirror's step: notified paths -> keys -> re-read -> delta -> replay ---------
    events = _notified(session, zk, 1)
    keys = changed_entities(session, [e.path for e in events])
    part = read_entities(session, keys)
    delta = delta_records(image, part, keys, options)
    assert delta.blockers == []
    after = apply_records(image, delta.records)
    now = read_cluster(session, watch=False)
    assert compare(expected_image(now), after) == []

    types = Counter(r.type for r in delta.records)
    for wanted in ("PARTITION_CHANGE_RECORD", "PARTITION_RECORD", "TOPIC_RECORD",
                   "REMOVE_TOPIC_RECORD", "CONFIG_RECORD", "CLIENT_QUOTA_RECORD",
                   "USER_SCRAM_CREDENTIAL_RECORD", "REMOVE_USER_SCRAM_CREDENTIAL_RECORD",
                   "ACCESS_CONTROL_ENTRY_RECORD", "REMOVE_ACCESS_CONTROL_ENTRY_RECORD",
                   "REGISTER_BROKER_RECORD", "UNREGISTER_BROKER_RECORD", "PRODUCER_IDS_RECORD",
                   "DELEGATION_TOKEN_RECORD", "REMOVE_DELEGATION_TOKEN_RECORD"):
        assert types[wanted] >= 1, (wanted, types)
    changes = {(r.data.get("topicId"), r.data.get("partitionId")): r for r in delta.records
               if r.type in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD")}
    t0_id = before.topics[t0].topic_id
    assert changes[(t0_id, 0)].type == "PARTITION_RECORD"  # folded: version + 2
    assert changes[(t0_id, 0)].data["partitionEpoch"] == _state(zk, p0)[1]
    assert changes[(t0_id, 1)].type == "PARTITION_CHANGE_RECORD"
    assert changes[(t0_id, 1)].data["leader"] == new_leader
    # only what changed was re-read: no key for an untouched topic's partitions
    assert not [k for k in keys if k.kind in ("topic", "partition") and k.name == topics[2]]

    # -- the same entities change again: their watches were re-armed by the re-read ------
    _arm_sentinel(session, 2)
    state, version = _state(zk, p0)
    zk.set(p0, _j({**state, "isr": [state["leader"]] + [
        r for r in json.loads(zk.get(f"/brokers/topics/{t0}")[0])["partitions"]["0"]
        if r != state["leader"]]}), version=version)
    zk.set("/config/topics/fresh", _j({"version": 1, "config": {}}))
    zk.delete("/config/users/newbie%40example.com")
    zk.delete("/brokers/ids/77")
    events = _notified(session, zk, 2)
    assert {e.path for e in events} >= {p0, "/config/topics/fresh",
                                       "/config/users/newbie%40example.com", "/brokers/ids/77"}
    keys = changed_entities(session, [e.path for e in events])
    part = read_entities(session, keys)
    second = delta_records(after, part, keys, options)
    assert [r.type for r in second.records if r.type.startswith("PARTITION")] == [
        "PARTITION_CHANGE_RECORD"]
    final = apply_records(after, second.records)
    assert compare(expected_image(read_cluster(session, watch=False)), final) == []

    # -- the cutover's drain reads without arming (watch=False): still only what changed ---
    _arm_sentinel(session, 3)
    zk.create("/brokers/topics/drained", _j({
        "version": 3, "topic_id": "AAAAAAAAAAAAAAAAAAAAdw", "partitions": {"0": [1]},
        "adding_replicas": {}, "removing_replicas": {}}))
    events = _notified(session, zk, 3)
    assert "/brokers/topics" in {e.path for e in events}
    armed_before = session.changes.armed
    keys = changed_entities(session, [e.path for e in events], watch=False)
    # the existing topics' armed watches still tell them apart: only the new topic is re-read
    assert [k for k in keys if k.kind == "topic"] == [EntityKey.topic("drained")]
    read_entities(session, keys, watch=False)
    assert session.changes.armed == armed_before  # nothing armed: no SetWatches round trips
    assert not session.changes.is_armed("/brokers/topics")
    assert not session.changes.is_armed("/brokers/topics/drained")
