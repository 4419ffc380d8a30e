"""The sample generator's pure parts: spec validation, presets, ids, SCRAM, the write plan."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

import orjson
import pytest

from samples import SampleCase, SampleSpec
from samples._cluster import (
    SCRAM_ITERATIONS,
    TOP_LEVEL_PATHS,
    build_plan,
    kafka_uuid,
    scram_credential,
)


def test_presets() -> None:
    assert SampleSpec.clean().problems == ()
    everything = SampleSpec.everything(topics=2)
    assert set(everything.problems) == set(SampleCase.BLOCKERS + SampleCase.WARNINGS)
    assert everything.topics == 2
    assert SampleSpec.everything(kraft_controller=False).kraft_controller is False


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"brokers": 0, "replication_factor": 1}, "brokers"),
        ({"topics": -1}, "topics"),
        ({"partitions_per_topic": 0}, "partitions_per_topic"),
        ({"replication_factor": 4, "brokers": 3}, "replication_factor"),
        ({"replication_factor": 0}, "replication_factor"),
    ],
)
def test_validate_names_the_field(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        SampleSpec(**kwargs).validate()  # type: ignore[arg-type]


def test_kafka_uuid_is_deterministic_and_well_formed() -> None:
    a = kafka_uuid(7, "topic", "x")
    assert a == kafka_uuid(7, "topic", "x")
    assert a != kafka_uuid(8, "topic", "x")
    ids = {kafka_uuid(s, "topic", n) for s in range(20) for n in "abcde"}
    assert len(ids) == 100
    for u in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", u)
        assert not u.startswith("-")
        raw = base64.urlsafe_b64decode(u + "==")
        assert len(raw) == 16 and raw != bytes(16) and raw != bytes(15) + b"\x01"


@pytest.mark.parametrize(("mech", "algo"), [("SCRAM-SHA-256", "sha256"),
                                             ("SCRAM-SHA-512", "sha512")])
def test_scram_credential_is_a_real_rfc5802_credential(mech: str, algo: str) -> None:
    text, secrets = scram_credential(1, "alice%40example.com", mech)
    m = re.fullmatch(r"salt=([^,]+),stored_key=([^,]+),server_key=([^,]+),iterations=(\d+)", text)
    assert m is not None
    assert int(m.group(4)) == SCRAM_ITERATIONS
    assert secrets == (m.group(1), m.group(2), m.group(3))
    salt = base64.b64decode(m.group(1))
    stored = base64.b64decode(m.group(2))
    assert len(stored) == hashlib.new(algo).digest_size
    # the same password (derived inside) gives the same stored key: recompute it
    password = hashlib.sha256(b"1:pw:alice%40example.com").digest().hex()
    salted = hashlib.pbkdf2_hmac(algo, password.encode(), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", algo).digest()
    assert hashlib.new(algo, client_key).digest() == stored


def test_plan_orders_parents_before_children_and_counts() -> None:
    spec = SampleSpec.everything(topics=4, partitions_per_topic=5, brokers=4,
                                 replication_factor=3)
    plan = build_plan(spec)
    seen: set[str] = set()
    for op in plan.ops:
        parent = op.path.rsplit("/", 1)[0]
        if op.kind == "create":
            assert parent == "" or parent in seen, op.path
            seen.add(op.path)
        else:
            assert op.path in seen, op.path
    for path in TOP_LEVEL_PATHS:
        assert path in seen
    edge = sum(1 for c in SampleCase.WARNINGS + SampleCase.BLOCKERS
               if c in plan.paths and "edge-cases" in plan.paths[c][0])
    # 4x5 ordinary + edge partitions + 1 legacy + 2 being deleted
    assert plan.partitions_written == 20 + edge + 1 + 2
    assert plan.partitions_to_migrate == plan.partitions_written - 2
    assert plan.state_znodes == plan.partitions_written - 1  # one state znode is missing
    assert plan.state_versions and all(v in (1, 2) for v in plan.state_versions.values())
    sets = [op for op in plan.ops if op.kind == "set" and op.path.endswith("/state")]
    assert len(sets) == sum(plan.state_versions.values())
    seq = [op for op in plan.ops if op.sequence]
    assert len(seq) == len(plan.notifications) > 0
    assert "/config/changes/config_change_0000000000" in plan.notifications
    assert not build_plan(SampleSpec.clean(change_notifications=False)).notifications


def test_plan_json_shapes() -> None:
    shrink = build_plan(SampleSpec.everything(brokers=3, replication_factor=3))
    edge_op = next(o for o in shrink.ops if o.path == "/brokers/topics/edge-cases")
    shrunk = orjson.loads(edge_op.data)
    assert shrunk["removing_replicas"] and not shrunk["adding_replicas"]
    plan = build_plan(SampleSpec.everything())
    assert plan.spec.brokers == 4
    data = {op.path: op.data for op in plan.ops if op.kind == "create"}
    b = {int(p.rsplit("/", 1)[1]): orjson.loads(data[p]) for p in plan.paths[SampleCase.BROKERS]}
    assert sorted(v["version"] for v in b.values()) == [2, 4, 5, 5]
    for v in b.values():
        assert isinstance(v["timestamp"], str)
        assert ("listener_security_protocol_map" in v) == (v["version"] >= 4)
        assert ("features" in v) == (v["version"] == 5)
        assert ("rack" in v) == (v["version"] >= 4)
    legacy = orjson.loads(data["/brokers/topics/legacy-no-topic-id"])
    assert "topic_id" not in legacy and legacy["version"] == 2
    edge = orjson.loads(data["/brokers/topics/edge-cases"])
    assert edge["version"] == 3 and edge["adding_replicas"] and edge["removing_replicas"]
    assert 999 in [r for reps in edge["partitions"].values() for r in reps]
    assert orjson.loads(data["/cluster/id"])["version"] == "1"
    ctrl = orjson.loads(data["/controller"])
    assert ctrl["kraftControllerEpoch"] == 1
    assert not any(op.path == "/controller" and op.ephemeral for op in plan.ops)


def test_clean_plan_has_no_problem_paths_but_every_entity() -> None:
    plan = build_plan(SampleSpec.clean())
    for case in SampleCase.BLOCKERS + SampleCase.WARNINGS:
        assert case not in plan.paths, case
    for case in (SampleCase.TOPIC_CONFIG, SampleCase.BROKER_CONFIG,
                 SampleCase.DEFAULT_BROKER_CONFIG, SampleCase.USER_QUOTA,
                 SampleCase.CLIENT_QUOTA, SampleCase.USER_CLIENT_QUOTA, SampleCase.IP_QUOTA,
                 SampleCase.DEFAULT_QUOTA, SampleCase.SCRAM, SampleCase.ACL_LITERAL,
                 SampleCase.ACL_PREFIXED, SampleCase.DELEGATION_TOKEN,
                 SampleCase.PRODUCER_ID_BLOCK):
        assert case in plan.paths, case
    assert "/config/users/alice%40example.com" in plan.paths[SampleCase.USER_QUOTA]
    ctrl = [op for op in plan.ops if op.path == "/controller"]
    assert len(ctrl) == 1 and ctrl[0].ephemeral
    assert orjson.loads(ctrl[0].data)["kraftControllerEpoch"] == -1


def test_same_seed_same_bytes() -> None:
    a = build_plan(SampleSpec.everything(seed=5))
    b = build_plan(SampleSpec.everything(seed=5))
    c = build_plan(SampleSpec.everything(seed=6))
    assert [(o.kind, o.path, o.data) for o in a.ops] == [(o.kind, o.path, o.data) for o in b.ops]
    assert a.topic_ids != c.topic_ids
