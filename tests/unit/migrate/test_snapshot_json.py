"""Snapshot JSON lines: redaction of every kind of secret, stable shape (no ZooKeeper)."""

from __future__ import annotations

import orjson
import pytest

from migrate.cli.snapshot import snapshot_lines
from writers import REDACTED, is_sensitive_config
from zkreader import ClusterSnapshot, ConfigZnode, DelegationToken, Topic, ZnodeStat

STAT = ZnodeStat(1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    ("key", "value", "sensitive"),
    [
        ("SCRAM-SHA-256", "salt=abc,stored_key=def,server_key=ghi,iterations=4096", True),
        ("scram-sha-512", "x", True),
        ("ssl.keystore.password", "pw", True),
        ("listener.name.in.ssl.key.password", "pw", True),
        ("listener.name.in.plain.sasl.jaas.config", "...password=\"x\";", True),
        ("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----", True),
        ("some.custom.key", "encryptedPassword:abc,passwordLength:8", True),
        ("retention.ms", "1000", False),
        ("producer_byte_rate", "1024", False),
    ],
)
def test_sensitivity(key: str, value: str, sensitive: bool) -> None:
    assert is_sensitive_config(key, value) is sensitive


def test_lines_redact_configs_and_tokens() -> None:
    snap = ClusterSnapshot(
        topics={"t": Topic("t", 3, "tGCUt6tCR3a2R1NDlMdp3Q", {0: (1, 2)}, {}, {}, STAT)},
        user_configs={"bob": ConfigZnode("users/bob", {"SCRAM-SHA-256": "salt=SECRETSALT",
                                                       "consumer_byte_rate": "5"}, STAT)},
        user_client_configs={("bob", "app"): ConfigZnode("users/bob/clients/app",
                                                         {"request_percentage": "50"}, STAT)},
        delegation_tokens={"tk": DelegationToken("tk", 3, "User%3Abob", None, (), 1, 3, 2, STAT)},
        pending_deletions=frozenset({"gone"}),
    )
    objs = [orjson.loads(line) for line in snapshot_lines(snap)]
    raw = b"".join(snapshot_lines(snap))
    assert b"SECRETSALT" not in raw and b"User%3Abob" not in raw
    assert [o["kind"] for o in objs] == [
        "topic", "pending_deletion", "config", "config", "delegation_token"]
    topic = objs[0]
    assert topic["path"] == "/brokers/topics/t"
    assert topic["data"]["assignment"] == {"0": [1, 2]}
    assert topic["stat"]["version"] == 3
    assert objs[2]["data"]["config"] == {"SCRAM-SHA-256": REDACTED, "consumer_byte_rate": "5"}
    assert objs[3]["path"] == "/config/users/bob/clients/app"
    assert objs[3]["data"]["entity_type"] == "users-clients"
    assert objs[4] == {"kind": "delegation_token", "path": "/delegation_token/tokens/tk",
                       "data": REDACTED, "stat": objs[4]["stat"]}


def test_partition_state_fast_path_matches_the_model() -> None:
    from migrate.cli.snapshot import _plain, _stat, _state
    from zkreader import PartitionState

    st = PartitionState("t", 3, 2, 7, 9, (2, 1), 1, ZnodeStat(1, 2, 3, 4, 5, 6, 7))
    assert _state(st) == _plain(st)  # a new model field must show up in the fast path too
    assert _stat(st.stat) == {"czxid": 1, "mzxid": 2, "version": 3, "ctime_ms": 4,
                              "mtime_ms": 5, "ephemeral_owner": 6, "num_children": 7}
