"""The plan of writes: every create and set of a sample cluster in dependency order, and what
the manifest will say about them. Pure; `samples._cluster` sends it."""

from __future__ import annotations

from dataclasses import dataclass, field

from samples._spec import (
    ACL_RESOURCE_TYPES,
    BASE_TIME_MS,
    CONTROLLER_EPOCH,
    DELETING_TOPIC,
    EDGE_TOPIC,
    KRAFT_CONTROLLER_ID,
    NO_ID_TOPIC,
    TOP_LEVEL_PATHS,
    UNREGISTERED_BROKER,
    SampleCase,
    SampleSpec,
)
from samples._values import (
    _broker_json,
    _config_json,
    _json,
    _state_json,
    _state_updates,
    kafka_uuid,
    scram_credential,
)


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
