"""Sample-cluster generator: writes a Kafka tree into ZooKeeper exactly as ZK-mode Kafka 3.x does.

Why: the demo, the tests and the benchmarks need a realistic Kafka tree (every entity kind, every
blocker and warning the pre-flight must find) without running Kafka brokers. Formats follow
Kafka's `ZkData.scala`: broker registrations of JSON versions
2, 4 and 5 as ephemerals of the generating session, `/controller` and `/controller_epoch`, topics v3
with `topic_id`, partition states whose znode version (the partition epoch) is real because the
data was set several times, configs, quotas, SCRAM, ACLs, a delegation token, the producer-id block,
and the paths `createTopLevelPaths()` pre-creates.

Speed: creates are batched into ZooKeeper multi-ops (`client.transaction()`), and up to `window`
of them are in flight at once. ZooKeeper applies one session's requests in order, so a batch may
create children of a node created by an earlier, still unanswered batch. Every result is checked.

The ephemeral broker and controller znodes belong to the session of the client passed in: keep
that client open for as long as they should exist (the CLI's `--hold` does that).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from kazoo.client import KazooClient

__all__ = ["SampleCase", "SampleManifest", "SampleSpec", "generate_sample_cluster"]

BASE_TIME_MS = 1_700_000_000_000
"""Fixed clock for every timestamp written, so a seed always gives the same bytes."""
CONTROLLER_EPOCH = 3
"""`/controller_epoch` value (and zkVersion): three ZK controller elections happened."""
KRAFT_CONTROLLER_ID = 3000
UNREGISTERED_BROKER = 999
EDGE_TOPIC = "edge-cases"
NO_ID_TOPIC = "legacy-no-topic-id"
DELETING_TOPIC = "being-deleted"
SCRAM_ITERATIONS = 4096

TOP_LEVEL_PATHS: tuple[str, ...] = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/admin/delete_topics",
    "/brokers/seqid",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
)
"""What `KafkaZkClient.createTopLevelPaths()` creates on every broker start (parents implied)."""

ACL_RESOURCE_TYPES = ("Topic", "Group", "Cluster", "TransactionalId", "DelegationToken", "User")


class SampleCase:
    """Names of the special cases a manifest records paths for (keys of `SampleManifest.paths`)."""

    # blockers
    TOPIC_WITHOUT_ID = "topic_without_id"
    LOG_DIR_EVENT = "log_dir_event"
    UNREGISTERED_BROKER = "unregistered_broker"
    MIGRATION_ZNODE = "migration_znode"
    KRAFT_CONTROLLER = "kraft_controller"
    # warnings
    PENDING_DELETION = "pending_deletion"
    IN_FLIGHT_REASSIGNMENT = "in_flight_reassignment"
    MISSING_PARTITION_STATE = "missing_partition_state"
    LEADER_NOT_IN_ISR = "leader_not_in_isr"
    ISR_OUTSIDE_REPLICAS = "isr_outside_replicas"
    OFFLINE_PARTITION = "offline_partition"
    RECOVERING_PARTITION = "recovering_partition"
    # entities (not findings)
    BROKERS = "brokers"
    CONTROLLER = "controller"
    CONTROLLER_EPOCH = "controller_epoch"
    CLUSTER_ID = "cluster_id"
    FEATURE = "feature"
    TOPIC_CONFIG = "topic_config"
    BROKER_CONFIG = "broker_config"
    DEFAULT_BROKER_CONFIG = "default_broker_config"
    USER_QUOTA = "user_quota"
    CLIENT_QUOTA = "client_quota"
    USER_CLIENT_QUOTA = "user_client_quota"
    IP_QUOTA = "ip_quota"
    DEFAULT_QUOTA = "default_quota"
    SCRAM = "scram"
    ACL_LITERAL = "acl_literal"
    ACL_PREFIXED = "acl_prefixed"
    DELEGATION_TOKEN = "delegation_token"
    PRODUCER_ID_BLOCK = "producer_id_block"

    BLOCKERS: tuple[str, ...] = (
        TOPIC_WITHOUT_ID, LOG_DIR_EVENT, UNREGISTERED_BROKER, MIGRATION_ZNODE, KRAFT_CONTROLLER,
    )
    WARNINGS: tuple[str, ...] = (
        PENDING_DELETION, IN_FLIGHT_REASSIGNMENT, MISSING_PARTITION_STATE, LEADER_NOT_IN_ISR,
        ISR_OUTSIDE_REPLICAS, OFFLINE_PARTITION, RECOVERING_PARTITION,
    )


@dataclass(frozen=True, slots=True)
class SampleSpec:
    """What to generate. Defaults give a small, healthy cluster (`clean()`).

    Attributes:
        topics: number of ordinary topics (`topic-00000`, ...).
        partitions_per_topic: partitions of each ordinary topic.
        replication_factor: replicas per partition (<= brokers).
        brokers: registered brokers (ids 1..brokers; JSON versions cycle 5, 4, 2).
        seed: derives topic ids, the cluster id, SCRAM salts and which states were updated.
        configs / quotas / scram / acls / delegation_token / producer_id_block: entity kinds
            that are not findings (on in both presets).
        change_notifications: the sequential `config_change_`, `acl_changes_` and
            `token_change_` znodes the admin tools leave behind (not migrated by Kafka).
        topic_without_id ... kraft_controller: blockers the pre-flight must find.
        pending_deletion ... recovering_partition: warnings the pre-flight must report.
        window: multi-op batches in flight at once; batch_ops: operations per multi-op.
    """

    topics: int = 10
    partitions_per_topic: int = 3
    replication_factor: int = 3
    brokers: int = 3
    seed: int = 42
    configs: bool = True
    quotas: bool = True
    scram: bool = True
    acls: bool = True
    delegation_token: bool = True
    producer_id_block: bool = True
    change_notifications: bool = True
    topic_without_id: bool = False
    log_dir_event: bool = False
    unregistered_broker: bool = False
    migration_znode: bool = False
    kraft_controller: bool = False
    pending_deletion: bool = False
    in_flight_reassignment: bool = False
    missing_partition_state: bool = False
    leader_not_in_isr: bool = False
    isr_outside_replicas: bool = False
    offline_partition: bool = False
    recovering_partition: bool = False
    window: int = 64
    batch_ops: int = 250

    @classmethod
    def clean(cls, **overrides: Any) -> SampleSpec:
        """A healthy cluster with every entity kind and no blocker or warning."""
        return replace(cls(), **overrides)

    @classmethod
    def everything(cls, **overrides: Any) -> SampleSpec:
        """Every blocker and every warning case on, plus every entity kind.

        Four brokers by default, so the in-flight reassignment can both add and remove a
        replica (with brokers == replication factor it can only shrink the replica set).
        """
        on: dict[str, Any] = {name: True for name in SampleCase.BLOCKERS + SampleCase.WARNINGS}
        on["brokers"] = 4
        on.update(overrides)
        return replace(cls(), **on)

    def validate(self) -> None:
        """Refuse impossible shapes before anything is written.

        Raises:
            ValueError: a count is out of range (names the field).
        """
        if self.brokers < 1:
            raise ValueError(f"brokers={self.brokers}: need at least 1")
        if self.topics < 0:
            raise ValueError(f"topics={self.topics}: must be >= 0")
        if self.partitions_per_topic < 1:
            raise ValueError(f"partitions_per_topic={self.partitions_per_topic}: need >= 1")
        if not 1 <= self.replication_factor <= self.brokers:
            raise ValueError(
                f"replication_factor={self.replication_factor}: must be 1..brokers "
                f"({self.brokers})"
            )
        if self.window < 1 or self.batch_ops < 1:
            raise ValueError("window and batch_ops must be >= 1")

    @property
    def problems(self) -> tuple[str, ...]:
        """The blocker and warning cases switched on."""
        return tuple(c for c in SampleCase.BLOCKERS + SampleCase.WARNINGS if getattr(self, c))


@dataclass(frozen=True)
class SampleManifest:
    """What was written, so tests can assert "found at path X" and count what was migrated.

    Attributes:
        spec: the spec generated from.
        cluster_id: the 22-char id in `/cluster/id`.
        broker_versions: broker id -> JSON version of its `/brokers/ids/<id>` znode.
        topic_ids: topic name -> topic id (None for the topic written without one).
        paths: `SampleCase` name -> znode paths of that case (only cases that were written).
        state_versions: state znode path -> expected znode version, for states set more than
            once (version > 0); every other written state has version 0.
        ephemeral_paths: znodes owned by the generating session.
        notifications: the sequential change-notification znodes written.
        session_id: that session's id (the znodes' `ephemeralOwner`).
        secrets: SCRAM salts/keys written; they must never appear in any output or report.
        brokers / topics: registered brokers and topics written (pending deletion included).
        partitions_written: partitions listed in topic znodes.
        partitions_to_migrate: the same minus topics pending deletion.
        state_znodes: partition state znodes written.
        znodes: znodes created in total (chroot-relative); ops: ZooKeeper write operations.
        elapsed_s: wall time of the generation.
    """

    spec: SampleSpec
    cluster_id: str
    broker_versions: Mapping[int, int]
    topic_ids: Mapping[str, str | None]
    paths: Mapping[str, tuple[str, ...]]
    state_versions: Mapping[str, int]
    ephemeral_paths: tuple[str, ...]
    notifications: tuple[str, ...]
    session_id: int
    secrets: tuple[str, ...]
    brokers: int
    topics: int
    partitions_written: int
    partitions_to_migrate: int
    state_znodes: int
    znodes: int
    ops: int
    elapsed_s: float

    def path(self, case: str) -> str:
        """The (first) path recorded for `case`.

        Raises:
            KeyError: the case was not generated.
        """
        return self.paths[case][0]


# --- deterministic values -----------------------------------------------------------------------


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


# --- the plan of writes -------------------------------------------------------------------------


@dataclass(slots=True)
class _Op:
    kind: str  # "create" or "set"
    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequence: bool = False


@dataclass
class _Plan:
    """Writes in dependency order, plus what the manifest will say about them."""

    spec: SampleSpec
    ops: list[_Op] = field(default_factory=list)
    paths: dict[str, list[str]] = field(default_factory=dict)
    state_versions: dict[str, int] = field(default_factory=dict)
    ephemerals: list[str] = field(default_factory=list)
    topic_ids: dict[str, str | None] = field(default_factory=dict)
    broker_versions: dict[int, int] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    sequences: dict[str, int] = field(default_factory=dict)
    notifications: list[str] = field(default_factory=list)
    partitions_written: int = 0
    partitions_to_migrate: int = 0
    state_znodes: int = 0

    def mark(self, case: str, path: str) -> None:
        self.paths.setdefault(case, []).append(path)

    def create(self, path: str, data: bytes = b"", ephemeral: bool = False) -> None:
        """Create `path`, first creating any missing parent with no data (like makepath)."""
        parent = path.rsplit("/", 1)[0]
        if parent and parent not in self.created:
            self.create(parent)
        if path in self.created:
            raise ValueError(f"sample generator bug: {path} planned twice")
        self.created.add(path)
        self.ops.append(_Op("create", path, data, ephemeral))
        if ephemeral:
            self.ephemerals.append(path)

    def set(self, path: str, data: bytes) -> None:
        self.ops.append(_Op("set", path, data))

    def notify(self, prefix: str, data: bytes) -> None:
        """Create a persistent-sequential child `prefix<10 digits>` (the parent must exist)."""
        parent = prefix.rsplit("/", 1)[0]
        if parent not in self.created:
            self.create(parent)
        n = self.sequences.get(parent, 0)
        self.sequences[parent] = n + 1
        self.created.add(f"{prefix}{n:010d}")  # ZooKeeper numbers a fresh parent's children 0..
        self.ops.append(_Op("create", prefix, data, sequence=True))
        self.notifications.append(f"{prefix}{n:010d}")


def _replicas(ids: list[int], rf: int, start: int) -> list[int]:
    return [ids[(start + k) % len(ids)] for k in range(rf)]


def _plan_topic(
    plan: _Plan,
    name: str,
    topic_index: int,
    assignment: dict[int, list[int]],
    *,
    topic_id: str | None,
    states: dict[int, tuple[int, list[int], bool] | None],
    adding: dict[int, list[int]] | None = None,
    removing: dict[int, list[int]] | None = None,
    migrate: bool = True,
) -> None:
    """Plan one topic the way `AdminZkClient` + the controller leave it.

    `states[p]` is (leader, isr, recovering), or None for "no state znode".
    """
    seed = plan.spec.seed
    body: dict[str, object] = {
        "version": 3 if topic_id else 2,
        "partitions": {str(p): r for p, r in assignment.items()},
        "adding_replicas": {str(p): r for p, r in (adding or {}).items()},
        "removing_replicas": {str(p): r for p, r in (removing or {}).items()},
    }
    if topic_id:
        body["topic_id"] = topic_id
    tpath = f"/brokers/topics/{name}"
    plan.topic_ids[name] = topic_id
    if plan.spec.configs:
        cfg = {"retention.ms": "604800000"} if topic_index % 4 == 0 else {}
        if topic_index % 8 == 1:
            cfg = {"cleanup.policy": "compact", "min.insync.replicas": "2"}
        plan.create(f"/config/topics/{name}", _config_json(cfg))
        if cfg and SampleCase.TOPIC_CONFIG not in plan.paths:
            plan.mark(SampleCase.TOPIC_CONFIG, f"/config/topics/{name}")
    plan.create(tpath, _json(body))
    plan.create(f"{tpath}/partitions")
    for p, replicas in assignment.items():
        plan.create(f"{tpath}/partitions/{p}")
        plan.partitions_written += 1
        if migrate:
            plan.partitions_to_migrate += 1
        state = states.get(p, (replicas[0], list(replicas), False))
        if state is None:
            continue
        leader, isr, recovering = state
        spath = f"{tpath}/partitions/{p}/state"
        updates = _state_updates(seed, topic_index, p)
        # created at leader epoch 0, then `updates` leader/ISR changes, each one setData.
        plan.create(spath, _state_json(leader, 0, isr, recovering and updates == 0))
        for epoch in range(1, updates + 1):
            plan.set(spath, _state_json(leader, epoch, isr, recovering and epoch == updates))
        plan.state_znodes += 1
        if updates:
            plan.state_versions[spath] = updates


def _plan_brokers_and_controller(plan: _Plan, ids: list[int]) -> None:
    spec = plan.spec
    cycle = (5, 4, 2)
    for i, b in enumerate(ids):
        version = cycle[i % 3]
        plan.broker_versions[b] = version
        path = f"/brokers/ids/{b}"
        plan.create(path, _broker_json(b, version), ephemeral=True)
        plan.mark(SampleCase.BROKERS, path)
    plan.create("/controller_epoch", b"0")
    for epoch in range(1, CONTROLLER_EPOCH + 1):
        plan.set("/controller_epoch", str(epoch).encode())
    plan.mark(SampleCase.CONTROLLER_EPOCH, "/controller_epoch")
    if spec.kraft_controller:
        body = {"version": 2, "brokerid": KRAFT_CONTROLLER_ID, "timestamp": str(BASE_TIME_MS),
                "kraftControllerEpoch": 1}
        plan.create("/controller", _json(body))  # persistent: a KRaft controller claimed it
        plan.mark(SampleCase.KRAFT_CONTROLLER, "/controller")
    else:
        body = {"version": 2, "brokerid": ids[0], "timestamp": str(BASE_TIME_MS),
                "kraftControllerEpoch": -1}
        plan.create("/controller", _json(body), ephemeral=True)
    plan.mark(SampleCase.CONTROLLER, "/controller")


def _plan_edge_topic(plan: _Plan, ids: list[int]) -> None:
    """One topic holding each partition-level problem in its own partition."""
    spec = plan.spec
    rf = max(min(spec.replication_factor, len(ids)), min(2, len(ids)))
    assignment: dict[int, list[int]] = {}
    states: dict[int, tuple[int, list[int], bool] | None] = {}
    adding: dict[int, list[int]] = {}
    removing: dict[int, list[int]] = {}
    cases: list[tuple[str, int]] = []
    spath = f"/brokers/topics/{EDGE_TOPIC}/partitions/{{}}/state"
    p = 0

    def next_partition(case: str) -> tuple[int, list[int]]:
        nonlocal p
        replicas = _replicas(ids, rf, p)
        assignment[p] = replicas
        cases.append((case, p))
        p += 1
        return p - 1, replicas

    if spec.missing_partition_state:
        q, _ = next_partition(SampleCase.MISSING_PARTITION_STATE)
        states[q] = None
    if spec.offline_partition:
        q, r = next_partition(SampleCase.OFFLINE_PARTITION)
        states[q] = (-1, [r[-1]], False)  # last ISR member went down: no leader, ISR kept
    if spec.recovering_partition:
        q, r = next_partition(SampleCase.RECOVERING_PARTITION)
        states[q] = (r[0], [r[0]], True)  # unclean election, still recovering
    if spec.leader_not_in_isr:
        q, r = next_partition(SampleCase.LEADER_NOT_IN_ISR)
        states[q] = (r[0], r[1:] or [UNREGISTERED_BROKER], False)
    if spec.isr_outside_replicas:
        q, r = next_partition(SampleCase.ISR_OUTSIDE_REPLICAS)
        outside = next((b for b in ids if b not in r), UNREGISTERED_BROKER + 1)
        states[q] = (r[0], [*r, outside], False)
    if spec.in_flight_reassignment:
        q, r = next_partition(SampleCase.IN_FLIGHT_REASSIGNMENT)
        target = next((b for b in ids if b not in r), None)
        if target is not None:  # moving r[0] -> target: replicas = union, both lists set
            assignment[q] = [*r, target]
            adding[q], removing[q] = [target], [r[0]]
        else:  # shrinking the replica set
            removing[q] = [r[-1]]
        states[q] = (r[0], list(r), False)
    if spec.unregistered_broker:
        q, r = next_partition(SampleCase.UNREGISTERED_BROKER)
        assignment[q] = [r[0], UNREGISTERED_BROKER]
        states[q] = (r[0], [r[0]], False)  # broker 999 never came back: out of the ISR
    if not assignment:
        return
    index = spec.topics  # after the ordinary topics, for the seed-derived choices
    _plan_topic(plan, EDGE_TOPIC, index, assignment,
                topic_id=kafka_uuid(spec.seed, "topic", EDGE_TOPIC), states=states,
                adding=adding, removing=removing)
    for case, q in cases:
        if case in (SampleCase.IN_FLIGHT_REASSIGNMENT, SampleCase.UNREGISTERED_BROKER):
            plan.mark(case, f"/brokers/topics/{EDGE_TOPIC}")
        else:
            plan.mark(case, spath.format(q))


def _plan_configs_and_quotas(plan: _Plan, ids: list[int]) -> None:
    spec = plan.spec
    if spec.configs:
        plan.create("/config/brokers/<default>", _config_json(
            {"log.cleaner.threads": "2", "log.retention.check.interval.ms": "300000"}))
        plan.mark(SampleCase.DEFAULT_BROKER_CONFIG, "/config/brokers/<default>")
        plan.create(f"/config/brokers/{ids[0]}", _config_json(
            {"log.cleaner.threads": "4", "max.connections": "2000"}))
        plan.mark(SampleCase.BROKER_CONFIG, f"/config/brokers/{ids[0]}")
    users: dict[str, dict[str, str]] = {}
    if spec.quotas:
        users["alice%40example.com"] = {"producer_byte_rate": "1048576",
                                        "consumer_byte_rate": "2097152"}
        users["<default>"] = {"producer_byte_rate": "10485760"}
    if spec.scram:
        for user, mech in (("alice%40example.com", "SCRAM-SHA-256"),
                           ("alice%40example.com", "SCRAM-SHA-512"),
                           ("bob", "SCRAM-SHA-512")):
            text, secret_parts = scram_credential(spec.seed, user, mech)
            users.setdefault(user, {})[mech] = text
            plan.secrets.extend(secret_parts)
    for user, cfg in users.items():
        path = f"/config/users/{user}"
        plan.create(path, _config_json(cfg))
        if any(k.startswith("SCRAM-") for k in cfg):
            plan.mark(SampleCase.SCRAM, path)
        if user == "<default>":
            plan.mark(SampleCase.DEFAULT_QUOTA, path)
        elif any(not k.startswith("SCRAM-") for k in cfg):
            plan.mark(SampleCase.USER_QUOTA, path)
    if not spec.quotas:
        return
    uc = "/config/users/alice%40example.com/clients/billing-app"
    plan.create(uc, _config_json({"request_percentage": "50"}))
    plan.mark(SampleCase.USER_CLIENT_QUOTA, uc)
    udc = "/config/users/<default>/clients/<default>"
    plan.create(udc, _config_json({"consumer_byte_rate": "5242880"}))
    plan.mark(SampleCase.DEFAULT_QUOTA, udc)
    plan.create("/config/clients/reporting-app",
                _config_json({"producer_byte_rate": "524288", "controller_mutation_rate": "10"}))
    plan.mark(SampleCase.CLIENT_QUOTA, "/config/clients/reporting-app")
    plan.create("/config/clients/<default>", _config_json({"consumer_byte_rate": "4194304"}))
    plan.mark(SampleCase.DEFAULT_QUOTA, "/config/clients/<default>")
    plan.create("/config/ips/192.168.10.5", _config_json({"connection_creation_rate": "20"}))
    plan.mark(SampleCase.IP_QUOTA, "/config/ips/192.168.10.5")
    plan.create("/config/ips/<default>", _config_json({"connection_creation_rate": "100"}))
    plan.mark(SampleCase.DEFAULT_QUOTA, "/config/ips/<default>")


def _acl(principal: str, operation: str, permission: str = "Allow") -> dict[str, str]:
    return {"principal": principal, "permissionType": permission, "operation": operation,
            "host": "*"}


def _plan_acls_tokens_pid(plan: _Plan, ids: list[int], first_topic: str | None) -> None:
    spec = plan.spec
    if spec.acls:
        for rtype in ACL_RESOURCE_TYPES:  # AclAuthorizer creates both stores' type nodes
            plan.create(f"/kafka-acl/{rtype}")
            plan.create(f"/kafka-acl-extended/prefixed/{rtype}")
        plan.create("/kafka-acl-changes")
        plan.create("/kafka-acl-extended-changes")
        literal = {
            f"/kafka-acl/Topic/{first_topic or 'orders'}": [
                _acl("User:alice@example.com", "Read"), _acl("User:alice@example.com", "Write"),
                _acl("User:mallory", "All", "Deny")],
            "/kafka-acl/Group/billing": [_acl("User:alice@example.com", "Read")],
            "/kafka-acl/Cluster/kafka-cluster": [_acl("User:bob", "IdempotentWrite")],
        }
        for path, acls in literal.items():
            plan.create(path, _json({"version": 1, "acls": acls}))
            plan.mark(SampleCase.ACL_LITERAL, path)
        prefixed = {
            "/kafka-acl-extended/prefixed/Topic/orders-": [_acl("User:bob", "Describe"),
                                                            _acl("User:bob", "Read")],
            "/kafka-acl-extended/prefixed/TransactionalId/billing-": [
                _acl("User:alice@example.com", "Write")],
        }
        for path, acls in prefixed.items():
            plan.create(path, _json({"version": 1, "acls": acls}))
            plan.mark(SampleCase.ACL_PREFIXED, path)
    if spec.delegation_token:
        token_id = kafka_uuid(spec.seed, "token", 0)
        path = f"/delegation_token/tokens/{token_id}"
        plan.create("/delegation_token/token_changes")
        plan.create(path, _json({
            "version": 3, "owner": "User%3Aalice%40example.com",
            "tokenRequester": "User%3Aalice%40example.com", "renewers": ["User%3Abob"],
            "issueTimestamp": BASE_TIME_MS, "maxTimestamp": BASE_TIME_MS + 7 * 86_400_000,
            "expiryTimestamp": BASE_TIME_MS + 86_400_000, "tokenId": token_id}))
        plan.mark(SampleCase.DELEGATION_TOKEN, path)
    if spec.producer_id_block:  # the path itself is pre-created empty; a broker then claimed
        plan.set("/latest_producer_id_block", _json(
            {"version": 1, "broker": ids[0], "block_start": "5000", "block_end": "5999"}))
        plan.mark(SampleCase.PRODUCER_ID_BLOCK, "/latest_producer_id_block")


def _plan_notifications(plan: _Plan) -> None:
    """The change notifications `kafka-configs`/`kafka-acls`/token APIs wrote (v2 config form)."""
    entity_paths = [
        p.removeprefix("/config/")
        for case in (SampleCase.TOPIC_CONFIG, SampleCase.BROKER_CONFIG, SampleCase.USER_QUOTA,
                     SampleCase.CLIENT_QUOTA, SampleCase.USER_CLIENT_QUOTA, SampleCase.IP_QUOTA)
        for p in plan.paths.get(case, ())
    ]
    for entity_path in entity_paths:
        plan.notify("/config/changes/config_change_",
                    _json({"version": 2, "entity_path": entity_path}))
    for path in plan.paths.get(SampleCase.ACL_LITERAL, ()):
        rtype, name = path.split("/")[2:4]
        plan.notify("/kafka-acl-changes/acl_changes_", f"{rtype}:{name}".encode())
    for path in plan.paths.get(SampleCase.ACL_PREFIXED, ()):
        rtype, name = path.split("/")[3:5]
        plan.notify("/kafka-acl-extended-changes/acl_changes_", _json(
            {"version": 1, "resourceType": rtype, "name": name, "patternType": "PREFIXED"}))
    for path in plan.paths.get(SampleCase.DELEGATION_TOKEN, ()):
        plan.notify("/delegation_token/token_changes/token_change_",
                    path.rsplit("/", 1)[1].encode())


def build_plan(spec: SampleSpec) -> _Plan:
    """All writes for `spec`, in an order where every parent precedes its children."""
    spec.validate()
    plan = _Plan(spec)
    ids = list(range(1, spec.brokers + 1))
    for path in TOP_LEVEL_PATHS:
        plan.create(path)
    cluster_id = kafka_uuid(spec.seed, "cluster")
    plan.create("/cluster/id", _json({"version": "1", "id": cluster_id}))
    plan.mark(SampleCase.CLUSTER_ID, "/cluster/id")
    plan.create("/feature", _json({"version": 2, "status": 1, "features": {}}))
    plan.mark(SampleCase.FEATURE, "/feature")
    _plan_brokers_and_controller(plan, ids)
    width = max(5, len(str(max(spec.topics - 1, 0))))
    names = [f"topic-{t:0{width}d}" for t in range(spec.topics)]
    for t, name in enumerate(names):
        assignment = {
            p: _replicas(ids, spec.replication_factor, t + p)
            for p in range(spec.partitions_per_topic)
        }
        _plan_topic(plan, name, t, assignment, topic_id=kafka_uuid(spec.seed, "topic", name),
                    states={})
    _plan_edge_topic(plan, ids)
    if spec.topic_without_id:  # created before 2.8 and never given an id by a 2.8+ controller
        _plan_topic(plan, NO_ID_TOPIC, spec.topics + 1,
                    {0: _replicas(ids, spec.replication_factor, 0)}, topic_id=None, states={})
        plan.mark(SampleCase.TOPIC_WITHOUT_ID, f"/brokers/topics/{NO_ID_TOPIC}")
    if spec.pending_deletion:
        _plan_topic(plan, DELETING_TOPIC, spec.topics + 2,
                    {p: _replicas(ids, spec.replication_factor, p) for p in range(2)},
                    topic_id=kafka_uuid(spec.seed, "topic", DELETING_TOPIC), states={},
                    migrate=False)
        plan.create(f"/admin/delete_topics/{DELETING_TOPIC}")
        plan.mark(SampleCase.PENDING_DELETION, f"/admin/delete_topics/{DELETING_TOPIC}")
    _plan_configs_and_quotas(plan, ids)
    _plan_acls_tokens_pid(plan, ids, names[0] if names else None)
    if spec.change_notifications:
        _plan_notifications(plan)
    if spec.migration_znode:  # left behind by an earlier, abandoned migration attempt
        plan.create("/migration", _json({
            "version": 0, "kraft_controller_id": KRAFT_CONTROLLER_ID,
            "kraft_controller_epoch": 1, "kraft_metadata_offset": -1,
            "kraft_metadata_epoch": -1}))
        plan.mark(SampleCase.MIGRATION_ZNODE, "/migration")
    return plan


# --- execution ---------------------------------------------------------------------------------


def _batches(ops: list[_Op], size: int) -> Iterator[list[_Op]]:
    for i in range(0, len(ops), size):
        yield ops[i : i + size]


def _check(results: object, batch: list[_Op]) -> None:
    """Raise on the first failed op of a committed multi-op (naming its path)."""
    if isinstance(results, Exception):
        raise RuntimeError(f"multi-op starting at {batch[0].path} failed: {results!r}")
    assert isinstance(results, list)
    for op, res in zip(batch, results, strict=False):
        if isinstance(res, Exception) and type(res).__name__ != "RolledBackError":
            raise RuntimeError(f"sample write {op.kind} {op.path} failed: {res!r}")
    for op, res in zip(batch, results, strict=False):
        if isinstance(res, Exception):
            raise RuntimeError(f"multi-op with {op.path} rolled back: {res!r}")


def _run(client: KazooClient, ops: list[_Op], window: int, batch_ops: int) -> int:
    """Send `ops` as multi-ops, `window` in flight; return the number of multi-ops sent."""
    inflight: deque[tuple[Any, list[_Op]]] = deque()
    sent = 0
    for batch in _batches(ops, batch_ops):
        tx = client.transaction()
        for op in batch:
            if op.kind == "create":
                tx.create(op.path, op.data, ephemeral=op.ephemeral, sequence=op.sequence)
            else:
                tx.set_data(op.path, op.data)
        inflight.append((tx.commit_async(), batch))
        sent += 1
        if len(inflight) >= window:
            res, b = inflight.popleft()
            _check(res.get(), b)
    while inflight:
        res, b = inflight.popleft()
        _check(res.get(), b)
    return sent


def generate_sample_cluster(client: KazooClient, spec: SampleSpec | None = None,
                            *, clock: Callable[[], float] = time.monotonic) -> SampleManifest:
    """Write the sample Kafka tree under `client`'s chroot (which must hold no Kafka tree yet).

    Args:
        client: a started kazoo client; its chroot is the cluster's chroot. The ephemeral broker
            and controller znodes belong to its session: keep it open while they are needed.
        spec: what to write (default `SampleSpec.clean()`).
        clock: seconds clock for the elapsed figure.

    Returns:
        The manifest of what was written.

    Raises:
        ValueError: the spec is impossible (names the field).
        RuntimeError: a write failed (names the path), e.g. the chroot already holds a tree.
    """
    spec = spec or SampleSpec.clean()
    t0 = clock()
    plan = build_plan(spec)
    if client.chroot:
        client.ensure_path("/")
    if client.exists("/brokers") is not None:
        raise RuntimeError(f"{client.chroot or '/'} already holds a Kafka tree (/brokers exists)")
    _run(client, plan.ops, spec.window, spec.batch_ops)
    if spec.log_dir_event:  # a persistent-sequential notification, as the broker writes it
        name = client.create(
            "/log_dir_event_notification/log_dir_event_",
            _json({"version": 1, "broker": spec.brokers, "event": 1}),
            sequence=True,
        )
        plan.mark(SampleCase.LOG_DIR_EVENT, name)
        plan.created.add(name)
    session_id = client.client_id[0] if client.client_id else 0
    return SampleManifest(
        spec=spec,
        cluster_id=kafka_uuid(spec.seed, "cluster"),
        broker_versions=dict(plan.broker_versions),
        topic_ids=dict(plan.topic_ids),
        paths={k: tuple(v) for k, v in plan.paths.items()},
        state_versions=dict(plan.state_versions),
        ephemeral_paths=tuple(plan.ephemerals),
        notifications=tuple(plan.notifications),
        session_id=session_id,
        secrets=tuple(plan.secrets),
        brokers=spec.brokers,
        topics=len(plan.topic_ids),
        partitions_written=plan.partitions_written,
        partitions_to_migrate=plan.partitions_to_migrate,
        state_znodes=plan.state_znodes,
        znodes=len(plan.created),
        ops=len(plan.ops) + (1 if spec.log_dir_event else 0),
        elapsed_s=clock() - t0,
    )
