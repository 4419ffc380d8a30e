"""The sample's deterministic values: ids, topic ids and SCRAM credentials derived from the seed,
and the JSON bodies Kafka writes into its znodes."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping

import orjson

from samples._spec import BASE_TIME_MS, CONTROLLER_EPOCH, SCRAM_ITERATIONS


def _digest(seed: int, *parts: object) -> bytes:
    return hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()


def kafka_uuid(seed: int, *parts: object) -> str:
    """A Kafka Uuid (22-char URL-safe base64, no padding) derived from the seed and `parts`.

    The top bit is cleared so the text never starts with '-' (Kafka avoids such ids for the
    command line) and the id is never Kafka's reserved ZERO or METADATA_TOPIC id.
    """
    raw = bytearray(_digest(seed, "uuid", *parts)[:16])
    raw[0] &= 0x7F
    raw[0] |= 0x10
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def scram_credential(seed: int, user: str, mechanism: str) -> tuple[str, tuple[str, ...]]:
    """A real SCRAM credential string as Kafka stores it, and its secret parts.

    Computed per RFC 5802 from a password derived from the seed (never returned):
    `salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=4096`.
    """
    algo = "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"
    password = _digest(seed, "pw", user).hex()
    salt = _digest(seed, "salt", user, mechanism)[:16]
    salted = hashlib.pbkdf2_hmac(algo, password.encode(), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", algo).digest()
    stored_key = hashlib.new(algo, client_key).digest()
    server_key = hmac.new(salted, b"Server Key", algo).digest()
    parts = tuple(base64.b64encode(v).decode() for v in (salt, stored_key, server_key))
    text = (
        f"salt={parts[0]},stored_key={parts[1]},server_key={parts[2]},"
        f"iterations={SCRAM_ITERATIONS}"
    )
    return text, parts


def _json(value: object) -> bytes:
    # orjson's result keeps its ~4 KiB growth buffer; copying trims it to the payload, which
    # matters with hundreds of thousands of state znodes planned at once.
    return bytes(memoryview(orjson.dumps(value)))


def _broker_json(broker_id: int, version: int) -> bytes:
    """`/brokers/ids/<id>` as `BrokerIdZNode.encode` writes it for JSON `version`."""
    host = f"broker-{broker_id}.kafka.local"
    plain = f"PLAINTEXT://{host}:9092"
    data: dict[str, object] = {
        "version": version,
        "host": host,
        "port": 9092,
        "jmx_port": 9999 if version >= 4 else -1,
        "timestamp": str(BASE_TIME_MS + broker_id),
        "endpoints": [plain] if version < 4 else [plain, f"SSL://{host}:9093"],
    }
    if version >= 4:
        data["rack"] = f"rack-{broker_id % 3}"
        data["listener_security_protocol_map"] = {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"}
    if version >= 5:
        data["features"] = {"metadata.version": {"min_version": 1, "max_version": 21}}
    return _json(data)


def _state_json(leader: int, leader_epoch: int, isr: list[int], recovering: bool = False) -> bytes:
    data: dict[str, object] = {
        "version": 1,
        "leader": leader,
        "leader_epoch": leader_epoch,
        "controller_epoch": CONTROLLER_EPOCH,
        "isr": isr,
    }
    if recovering:
        data["leader_recovery_state"] = 1
    return _json(data)


def _config_json(config: Mapping[str, str]) -> bytes:
    return _json({"version": 1, "config": dict(config)})


def _state_updates(seed: int, topic_index: int, partition: int) -> int:
    """How many times a partition's state was set after creation (0, 1 or 2; ~40% updated)."""
    x = (topic_index * 7919 + partition * 104729 + seed * 31) % 5
    return x if x < 3 else 0
