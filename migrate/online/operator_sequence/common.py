"""What every path's operator sequence is made of: the sequence and its steps, the per-node
property lists, and the steps the online paths share (the package docstring says where the
facts come from)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from migrate.flags.standin import StandInSpec
from migrate.translate.framing import DEFAULT_METADATA_VERSION
from zkreader import ClusterSnapshot

__all__ = [
    "BOOTSTRAP_PLACEHOLDER",
    "DISTINCT_IDS_NOTE",
    "ELECTION_TIMEOUT_MS",
    "FETCH_TIMEOUT_MS",
    "KRAFT_AUTHORIZER",
    "OFFLINE",
    "ONLINE_STANDIN",
    "ONLINE_VOTER",
    "OperatorSequence",
    "BROKER_METADATA_ROLL",
    "REVERT_BROKERS",
    "REVERT_BROKERS_FETCHED",
    "SLOW_EVENT_THRESHOLD_MS",
    "Step",
    "TOKEN_SECRET_PLACEHOLDER",
    "address_notes",
    "bootstrap_string",
    "bracketed_host",
    "canary_bootstrap",
    "controller_base",
    "controller_dir_placeholder",
    "finalise_step",
    "migrating_brokers",
    "migration_controllers",
    "migration_mode_step",
    "prepare_step",
    "revert_zk_action",
    "sequence_lines",
    "start_over",
    "to_kraft_step",
    "upgrade_step",
    "voters_string",
]

ONLINE_STANDIN = "online-standin"
ONLINE_VOTER = "online-voter"
OFFLINE = "offline"

ELECTION_TIMEOUT_MS = 30000
"""The controllers' `controller.quorum.election.timeout.ms`: long, so that none of them stands
for election before the stand-in has won epoch 1 (a controller that wins first writes its own
bootstrap records); the value the stand-in's tests run real 3.9.1 controllers with."""

FETCH_TIMEOUT_MS = 30000
"""The controllers' `controller.quorum.fetch.timeout.ms` on the stand-in path: how long a follower
waits for a Fetch answer from its leader before it stands for election. Kafka's 2000 ms default
is missed on a loaded host: real 3.9.1 controllers with the printed properties following the
stand-in stood for election 1.4 s after following (one rehearsal at load 60-100), and the
stand-in lost its majority in the middle of the pre-copy (exit 3). The value the stand-in's tests
run real controllers with; a resigning stand-in still hands over at once (EndQuorumEpoch)."""

SLOW_EVENT_THRESHOLD_MS = 30000
"""Kafka 4.x controllers' `controller.performance.always.log.threshold.ms` (module docstring):
well above the first replay measured on a loaded host, so that only a real stall is an ERROR."""

DISTINCT_IDS_NOTE = ("Controller node ids must differ from every broker id (brokers and "
                     "controllers share one id space in KRaft).")
TOKEN_SECRET_PLACEHOLDER = "<the same secret as the brokers' delegation.token.secret.key>"
"""What `delegation.token.secret.key` is printed as: never a value (design I7)."""

_SOURCE = ("Kafka 3.9 documentation, operations: \"ZooKeeper to KRaft Migration\" "
           "(https://kafka.apache.org/39/documentation.html#kraft_zk_migration)")
_OFFLINE_SOURCE = ("zk2kraft's offline rehearsal (3.9.1 and 4.1.1 nodes on the migrated log: "
                   "docs/design/offline.md) and Kafka's KRaft configuration "
                   "(https://kafka.apache.org/documentation/#kraft_config)")
KRAFT_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def controller_dir_placeholder(node_id: int) -> str:
    """A controller's `metadata.log.dir` when zk2kraft does not know it (the stand-in path)."""
    return f"<controller {node_id}'s metadata directory>"


def _address_placeholder(node_id: int) -> str:
    return f"<controller {node_id}'s host:port>"


@dataclass(frozen=True, slots=True)
class Step:
    """One numbered step of the procedure and how to go back once it is done.

    Attributes:
        title: what the step achieves.
        actions: what the operator does, in order.
        rollback: how to return to ZooKeeper mode once this step is complete (None: no way back).
    """

    title: str
    actions: tuple[str, ...]
    rollback: str | None

    def to_json(self, number: int) -> dict[str, object]:
        return {"step": number, "title": self.title, "actions": list(self.actions),
                "rollback": self.rollback}


@dataclass(frozen=True, slots=True)
class OperatorSequence:
    """Per-node properties and the numbered procedure (`to_json` is plan's JSON entry).

    Attributes:
        path: `online-standin`, `online-voter` or `offline`.
        standin: the stand-in flags (the stand-in path only).
        target_kafka: the release the nodes run at the end (`3.9`; offline `4.N` or `4.x`,
            online `4.N` after Kafka's upgrade, `upgrade_step`).
        controllers: node id -> the properties that controller must run with (in print order).
        brokers: broker id -> the properties it must run with (added to, or changed in, its
            server.properties).
        broker_removals: the properties each broker must no longer have (offline: KRaft mode).
        steps: the procedure, in order.
    """

    path: str
    cluster_id: str | None
    metadata_version: str
    target_kafka: str
    standin: StandInSpec | None
    controllers: Mapping[int, Mapping[str, str]]
    brokers: Mapping[int, Mapping[str, str]]
    broker_removals: tuple[str, ...]
    steps: tuple[Step, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """The `operator_sequence` entry of `plan --json` (no secrets: placeholders only)."""
        return {
            "path": self.path,
            "source": _OFFLINE_SOURCE if self.path == OFFLINE else _SOURCE,
            "cluster_id": self.cluster_id,
            "metadata_version": self.metadata_version,
            "target_kafka": self.target_kafka,
            "standin": None if self.standin is None else {
                "node_id": self.standin.node_id,
                "listen": f"{self.standin.listen[0]}:{self.standin.listen[1]}",
                "log_dir": str(self.standin.log_dir)},
            "controllers": [{"node_id": n, "properties": dict(p)}
                            for n, p in self.controllers.items()],
            "brokers": [{"broker_id": n, "properties": dict(p)}
                        for n, p in self.brokers.items()],
            "broker_removals": list(self.broker_removals),
            "steps": [s.to_json(i) for i, s in enumerate(self.steps, 1)],
            "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        """The same as plain text lines, for the terminal (properties as `key=value`)."""
        return sequence_lines(self.to_json())


def sequence_lines(doc: Mapping[str, object]) -> list[str]:
    """`operator_sequence` (as `to_json` made it) as the terminal's text; one renderer, so the
    text and the JSON cannot disagree."""
    out = [f"Operator's sequence, {doc['path']} (after {doc['source']})"]
    controllers = doc["controllers"]
    brokers = doc["brokers"]
    steps = doc["steps"]
    assert isinstance(controllers, list) and isinstance(brokers, list)
    assert isinstance(steps, list)
    for c in controllers:
        out.append(f"controller {c['node_id']}: controller.properties")
        out.extend(f"    {k}={v}" for k, v in c["properties"].items())
    for b in brokers:
        out.append(f"broker {b['broker_id']}: add to (or change in) server.properties")
        out.extend(f"    {k}={v}" for k, v in b["properties"].items())
    removals = doc.get("broker_removals")
    if removals:
        assert isinstance(removals, list)
        out.append("every broker: remove from server.properties")
        out.extend(f"    {k}" for k in removals)
    for s in steps:
        out.append(f"{s['step']}. {s['title']}")
        out.extend(f"     - {a}" for a in s["actions"])
        out.append(f"     rollback: {s['rollback'] or 'none: this step cannot be undone'}")
    notes = doc["notes"]
    assert isinstance(notes, list)
    out.extend(f"note: {n}" for n in notes)
    return out


def voters_string(voters: Mapping[int, tuple[str, int] | None]) -> str:
    return ",".join(f"{n}@{_address(n, a)}" for n, a in voters.items())


def bootstrap_string(voters: str) -> str:
    """The `host:port` list of a `controller.quorum.voters` string (Kafka's tools'
    --bootstrap-controller value)."""
    return ",".join(v.split("@", 1)[1] for v in voters.split(","))


def controller_base(node_id: int, address: tuple[str, int] | None, directory: str, *,
                    voters: str, listener: str, protocol_map: str) -> dict[str, str]:
    """What every KRaft controller of a sequence runs with, migration mode or not; each path
    adds its own keys after these (the order is the printed order)."""
    return {
        "process.roles": "controller",
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "controller.listener.names": listener,
        "listeners": f"{listener}://{_address(node_id, address)}",
        "listener.security.protocol.map": protocol_map,
        "metadata.log.dir": directory,
        "log.dirs": directory,
    }


def _address(node_id: int, address: tuple[str, int] | None) -> str:
    if address is None:
        return _address_placeholder(node_id)
    return f"{bracketed_host(address[0])}:{address[1]}"


def bracketed_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _inter_broker_listener(snapshot: ClusterSnapshot) -> tuple[str, str | None]:
    """The brokers' inter-broker listener name, when the registrations tell it.

    ZooKeeper does not record `inter.broker.listener.name`; when every broker advertises exactly
    one listener, and the same one, that is it. Otherwise a placeholder naming the candidates,
    and a note saying why.
    """
    names = {tuple(sorted(e.listener for e in b.endpoints)) for b in snapshot.brokers.values()}
    if len(names) == 1:
        (only,) = names
        if len(only) == 1:
            return only[0], None
    common = sorted(set.intersection(*(set(n) for n in names))) if names else []
    return ("<the brokers' inter.broker.listener.name"
            + (f": one of {', '.join(common)}>" if common else ">"),
            "inter.broker.listener.name: the brokers advertise several listeners, and ZooKeeper "
            "does not record which one is the inter-broker listener; set the controllers' value "
            "to the brokers' inter.broker.listener.name (default: the listener of "
            "security.inter.broker.protocol, PLAINTEXT)")


BOOTSTRAP_PLACEHOLDER = "<host:port of the brokers' listener the canary can reach>"


def canary_bootstrap(snapshot: ClusterSnapshot) -> tuple[str, str]:
    """The printed `migrate`'s `--bootstrap-server` (the canary's brokers) and the note why.

    Built from the listeners the brokers registered in ZooKeeper: the inter-broker listener
    when the registrations tell it (`_inter_broker_listener`) and it needs no credentials, else
    a PLAINTEXT listener every broker advertises (reachable without a --command-config). With
    neither, a placeholder, and the note says why (the canary's client settings are the
    operator's: zk2kraft does not know the brokers' credentials and must not print them).
    """
    ibl, _ = _inter_broker_listener(snapshot)
    plain = sorted(set.intersection(*(
        {e.listener for e in b.endpoints if e.security_protocol == "PLAINTEXT"}
        for b in snapshot.brokers.values()))) if snapshot.brokers else []
    chosen = ibl if ibl in plain else (plain[0] if plain else None)
    if chosen is None:
        return BOOTSTRAP_PLACEHOLDER, (
            "--bootstrap-server: no PLAINTEXT listener is advertised by every broker in "
            "ZooKeeper"
            + (f" (the inter-broker listener {ibl} needs credentials)"
               if not ibl.startswith("<") else "")
            + ", so zk2kraft cannot choose one the canary reaches without credentials; give "
            "the brokers' host:port list and --command-config with the client's settings "
            "(security.protocol, sasl.*, ssl.*)")
    hosts = ",".join(f"{bracketed_host(e.host)}:{e.port}"
                     for _, b in sorted(snapshot.brokers.items())
                     for e in b.endpoints if e.listener == chosen)
    why = ("the brokers' inter-broker listener" if chosen == ibl else
           "a PLAINTEXT listener every broker advertises; ZooKeeper does not record which is "
           "the inter-broker listener")
    return hosts, (f"--bootstrap-server lists each broker's {chosen} listener as registered in "
                   f"ZooKeeper ({why}): with it the canary produces and consumes through the "
                   "cutover, the report holds the client-observed window, and the brokers are "
                   "asked afresh after the handoff whether they serve; --html writes the same "
                   "report as a page")


def _broker_protocol_map(snapshot: ClusterSnapshot, broker_id: int, listener: str,
                         protocol: str) -> str:
    broker = snapshot.brokers[broker_id]
    pairs = {e.listener: e.security_protocol for e in broker.endpoints}
    pairs[listener] = protocol
    return ",".join(f"{k}:{v}" for k, v in pairs.items())


def migration_controllers(
    snapshot: ClusterSnapshot, addresses: Mapping[int, tuple[str, int] | None],
    directories: Mapping[int, str], *, voters: str, zookeeper: str, listener: str,
    protocol: str, election_timeout: bool,
) -> tuple[dict[int, dict[str, str]], list[str]]:
    """Migration-mode controller properties (online paths) and the notes they need."""
    ibl, ibl_note = _inter_broker_listener(snapshot)
    tokens = bool(snapshot.delegation_tokens)
    # Kafka refuses a controller whose inter.broker.listener.name is not in its protocol map
    # (KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol), so the brokers' listeners,
    # as their registrations map them, are mapped beside the controller listener
    listener_protocols = {listener: protocol}
    for broker_id in sorted(snapshot.brokers):
        for e in snapshot.brokers[broker_id].endpoints:
            listener_protocols.setdefault(e.listener, e.security_protocol)
    controller_map = ",".join(f"{k}:{v}" for k, v in listener_protocols.items())
    controllers: dict[int, dict[str, str]] = {}
    for node_id, address in addresses.items():
        props = controller_base(node_id, address, directories[node_id], voters=voters,
                                listener=listener, protocol_map=controller_map)
        if election_timeout:
            props["controller.quorum.election.timeout.ms"] = str(ELECTION_TIMEOUT_MS)
            props["controller.quorum.fetch.timeout.ms"] = str(FETCH_TIMEOUT_MS)
        props.update({
            "zookeeper.metadata.migration.enable": "true",
            "zookeeper.connect": zookeeper,
            "inter.broker.listener.name": ibl,
        })
        if tokens:
            props["delegation.token.secret.key"] = TOKEN_SECRET_PLACEHOLDER
        controllers[node_id] = props
    notes = [
        DISTINCT_IDS_NOTE,
    ]
    if ibl_note:
        notes.append(ibl_note)
    if tokens:
        notes.append("ZooKeeper holds delegation tokens: give each controller the brokers' "
                     "delegation.token.secret.key (the tokens' HMACs derive from it); it is "
                     "shown as a placeholder, never a value.")
    if protocol.startswith("SASL"):
        notes.append(f"The controller listener is {protocol}: keep the listener's JAAS "
                     "configuration (sasl.mechanism.controller.protocol, listener.name."
                     f"{listener.lower()}.plain.sasl.jaas.config) on every node.")
    return controllers, notes


def migrating_brokers(snapshot: ClusterSnapshot, *, voters: str, listener: str, protocol: str,
                      mv: str) -> dict[int, dict[str, str]]:
    return {
        broker_id: {
            "broker.id": str(broker_id),
            "zookeeper.metadata.migration.enable": "true",
            "controller.quorum.voters": voters,
            "controller.listener.names": listener,
            "listener.security.protocol.map": _broker_protocol_map(
                snapshot, broker_id, listener, protocol),
            "inter.broker.protocol.version": mv,
        }
        for broker_id in sorted(snapshot.brokers)
    }


def address_notes() -> tuple[str, ...]:
    return ("<controller N's host:port> is the address each controller listens on for the "
            "controller listener (its entry in controller.quorum.voters); zk2kraft does not "
            "know it from --voter ID=DIR.",)


_REMOVE_MIGRATION_PROPERTIES = ("on each broker remove zookeeper.metadata.migration.enable, "
                                "controller.quorum.voters, controller.listener.names and the "
                                "controller listener's entry in listener.security.protocol.map")
REVERT_BROKERS = f"{_REMOVE_MIGRATION_PROPERTIES}, then roll the brokers"
"""Leaving migration mode before any controller ran (nothing was fetched)."""

BROKER_METADATA_ROLL = ("roll the brokers one at a time: each stopped, its __cluster_metadata-0 "
                        "directory deleted (in its metadata.log.dir, else the first of its "
                        "log.dirs; the rest of its data stays), started again, and every "
                        "partition's ISR full again before the next")
"""What a broker in migration mode needs once the quorum it fetched from is discarded.

Every broker in migration mode is a Raft observer: it fetches the quorum's log into its own
`__cluster_metadata-0` and keeps the leader and epoch it followed in its `quorum-state`. A
re-formatted quorum starts its log and epochs again, and a broker that kept the old copy shuts
down when the new leader's answers contradict it ("raftManager fault ... leader requested
truncation to offset 1, which is below the current high watermark", or "... inconsistent with
current leader": real 3.9.1, issues 16 and 30). The one sentence for every way back and every
start-over that discards a controller's log (takeover's included)."""

REVERT_BROKERS_FETCHED = f"{_REMOVE_MIGRATION_PROPERTIES}, then {BROKER_METADATA_ROLL}"
"""Leaving migration mode once the brokers may have fetched from the controllers' quorum."""


def start_over(*, connect: str, standin_dir: str, journal: str, followed: str | None,
               rerun: str) -> str:
    """The start-over with zk2kraft, brokers included, in the order that works.

    The controller that led without the stand-in recorded itself in `/migration` (real 3.9.1:
    `kraft_controller_epoch` set, `kraft_metadata_offset` -1), which a fresh run refuses; with
    nothing migrated and the controllers stopped it goes, and they create their empty one again
    on start. The brokers' copies go with the controllers stopped (a broker restarted while they
    run would fetch the old log again); ZooKeeper's controller serves them meanwhile.

    Args:
        connect: the `--zookeeper` connect string.
        standin_dir: zk2kraft's `--standin` directory.
        journal: zk2kraft's journal file.
        followed: who the brokers followed ("controller 3002 at epoch 3"), when known.
        rerun: the last step, what starts zk2kraft again ("run this command again").
    """
    whom = f"controller {followed}" if followed else "the leader of the discarded quorum"
    return (f"(1) stop every KRaft controller (and zk2kraft), then read /migration "
            f"(`zookeeper-shell {connect} get /migration`) and, if its kraft_metadata_offset is "
            "-1 (nothing was migrated; a controller that led recorded itself there), delete it "
            f"(`zookeeper-shell {connect} delete /migration`); (2) re-format each controller's "
            "metadata.log.dir (delete it, then `kafka-storage format` it with this cluster's id "
            "and its controller.properties, as for the first start); (3) empty "
            f"{standin_dir} and remove {journal}; (4) the brokers in migration mode follow "
            f"{whom} in their own __cluster_metadata-0, and a re-formatted quorum makes them "
            f"shut down: with the controllers still stopped, {BROKER_METADATA_ROLL} "
            f"(ZooKeeper's controller serves them meanwhile); (5) {rerun} and, once it listens "
            "on its slot, start the controllers within the 120 s it asks for votes (the printed "
            "sequence's order: a controller started first whose "
            "controller.quorum.election.timeout.ms runs out before the stand-in asks leads "
            "itself, and the run refuses)")


def revert_zk_action(zookeeper: str, voter_flags: str, also: str) -> str:
    return (f"stop every controller{also}, then `zk2kraft rollback --zookeeper {zookeeper} "
            f"{voter_flags}` (removes the /controller claim and /migration in one fenced "
            "multi-op and lifts /controller_epoch above the KRaft epochs in the partition "
            "states; Kafka's docs: delete /controller, then get and delete /migration, quickly)")


def prepare_step(mv: str) -> Step:
    return Step("Prepare",
                (f"run Kafka 3.9.1 on every broker with inter.broker.protocol.version={mv} (the "
                 "metadata.version the controllers will use); do not change it until the "
                 "migration is finalised",
                 "optionally log org.apache.kafka.metadata.migration at TRACE on the "
                 "controllers"),
                "nothing to undo: the cluster has not left ZooKeeper mode")


def migration_mode_step(voters: str) -> Step:
    return Step("Put the brokers in migration mode",
                ("give each broker the properties listed for it above and roll the brokers one "
                 "at a time; ZooKeeper's controller keeps leading (nothing runs at "
                 f"{voters} yet)",),
                REVERT_BROKERS)


def to_kraft_step(revert_zk: str) -> Step:
    return Step("Move the brokers to KRaft",
                ("on each broker: replace broker.id with node.id (same id), add "
                 "process.roles=broker, remove zookeeper.connect and every zookeeper.* setting, "
                 "zookeeper.metadata.migration.enable, inter.broker.protocol.version and "
                 "control.plane.listener.name; keep controller.quorum.voters and "
                 "controller.listener.names; replace the AclAuthorizer with "
                 f"{KRAFT_AUTHORIZER}; roll the brokers one at a time",
                 "expected at each broker's first KRaft start: STALE_BROKER_EPOCH at ERROR on "
                 "the broker (AssignmentsManager, retried) and on the active controller "
                 "(ControllerApis) while the broker reports its replicas' directories before its "
                 "own metadata image holds its new registration (the migrated log names no "
                 "directories); they stop once its metadata catches up"),
                "on each broker remove process.roles, replace node.id with broker.id and "
                "restore zookeeper.connect (and other zookeeper.* settings), keeping "
                "zookeeper.metadata.migration.enable=true, and roll the brokers; then "
                f"{revert_zk}; then {REVERT_BROKERS_FETCHED} (a second roll)")


def upgrade_step(target_kafka: str, voters: str) -> Step:
    """After Finalise, Kafka's own rolling upgrade from 3.9 to the 4.N line `target_kafka`: the
    online path migrates to 3.9 (Kafka 4 has no ZooKeeper and no migration code), and this step
    takes the finalised KRaft cluster on. The feature command is the one rehearsed
    (`test_standin_rehearsal_to_kraft`): `--release-version` raises every feature to the
    release's levels, `kraft.version` 1 included."""
    bootstrap = bootstrap_string(voters)
    mv = DEFAULT_METADATA_VERSION[target_kafka]
    return Step(f"Upgrade to Kafka {target_kafka}",
                ("only once Finalise is done: every controller and broker runs in KRaft mode "
                 "with no zookeeper.* setting (Kafka 4 has no ZooKeeper)",
                 f"roll the controllers onto Kafka {target_kafka}'s release one at a time, with "
                 "the same properties, each caught up before the next (Finalise's check); then "
                 "the brokers one at a time, each back in every ISR before the next",
                 f"then raise the cluster's features to {target_kafka}'s: kafka-features.sh "
                 f"--bootstrap-controller {bootstrap} upgrade --release-version {target_kafka} "
                 f"(metadata.version {mv} and every other feature at that release's level; "
                 "kraft.version 1 too); check with kafka-features.sh --bootstrap-controller "
                 f"{bootstrap} describe"),
                None)


def finalise_step(voters: str) -> Step:
    bootstrap = bootstrap_string(voters)
    return Step("Finalise",
                ("remove zookeeper.metadata.migration.enable and zookeeper.connect from every "
                 "controller and restart the controllers one at a time; the active controller "
                 "records ZkMigrationState POST_MIGRATION",
                 "before restarting the next controller, wait until the restarted one has "
                 "caught up: note the time just before restarting it (`date +%s%3N`, "
                 "milliseconds since the epoch), then wait until kafka-metadata-quorum.sh "
                 f"--bootstrap-controller {bootstrap} describe --replication lists it with "
                 "Lag 0 and a LastFetchTimestamp (milliseconds since the epoch) later than that "
                 "time: until the restarted controller fetches, the leader may still show "
                 "its row from before the restart, Lag 0 included (restarting the next one "
                 "earlier costs elections and a time with no leader)",
                 "ZooKeeper can then be deprovisioned (if nothing else uses it)"),
                None)
