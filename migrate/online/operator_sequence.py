"""The operator's sequence of each path, exactly per node: one source for plan's text, its
`--json` (`operator_sequence`) and the runbooks in docs/runbooks/ (`migrate/online/runbook.py`).

Three paths: online through the stand-in (`plan --standin ... --controller ...`), online into
local voter directories (`plan --voter ...`) and offline (`plan --offline --voter ...`).
Pure: a `ClusterSnapshot`, the checked flags and the metadata.version in, property lists and
numbered steps out; nothing here reads or writes.

Where the facts come from: Kafka 3.9's documentation, "ZooKeeper to KRaft Migration" (preparing,
provisioning the controller quorum, entering migration mode on the brokers, migrating the brokers
to KRaft, finalising, and the table of how to revert after each completed step), restated in our
own words and adapted to the stand-in: the controllers use static `controller.quorum.voters`
with zk2kraft's slot in it (the stand-in leads a static quorum; Kafka's sample uses
`controller.quorum.bootstrap.servers` for a dynamic one), and they start with a long election
timeout so that the stand-in wins the first election (docs/design.md, "The stand-in voter").

Why each property, per Kafka 3.9 (`KafkaConfig` validation of a migrating ZooKeeper broker,
its `BrokerRegistrationRequest`, and `ControllerServer`):
* brokers must name every controller (`controller.quorum.voters`), the controller listener
  (`controller.listener.names`, mapped in `listener.security.protocol.map`), an explicit
  `broker.id`, and an `inter.broker.protocol.version` equal to the KRaft metadata.version (a
  migrating broker registers with min = max = its IBP, so the two must match);
* controllers need `zookeeper.metadata.migration.enable=true` and `zookeeper.connect`, and the
  brokers' inter-broker listener name to send them RPCs, mapped in their own
  `listener.security.protocol.map` (Kafka refuses to start otherwise; found by starting a real
  3.9.1 controller with the printed file);
* `delegation.token.secret.key` on the controllers when ZooKeeper holds delegation tokens: the
  token HMACs are derived from it, and without it every token update is a publishing fault. It
  is printed as a placeholder, never a value (zk2kraft does not know it and must not print it).
* every controller names its `metadata.log.dir` and `log.dirs` (the same directory: a
  controller keeps nothing else, and `log.dirs` would otherwise default to /tmp/kafka-logs, which
  `kafka-storage format` formats too). With `--voter` it is that directory; with the stand-in
  zk2kraft does not know it, so it is a placeholder the operator fills in
  (`controller_dir_placeholder`);
* offline, the controllers run plain KRaft (no migration flag, no ZooKeeper) on directories
  `migrate --offline` already formatted, and the brokers' ZooKeeper-mode registrations are gone
  with their sessions, so broker ids come from the assignments and their own listeners are the
  operator's (a placeholder keeps them, the controller listener is added);
* Kafka 4.x controllers log ERROR "Exceptionally slow controller event" for any event over
  `controller.performance.always.log.threshold.ms` (2000 by default); the first replay of the
  loaded log on a cold JVM is one such event (measured: docs/design.md "Offline migration",
  "Exceptionally slow controller event"), so the 4.x controllers get a higher threshold: it changes
  only what Kafka logs at ERROR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrate._standinargs import StandInSpec
from writers import MetadataVersion
from zkreader import ClusterSnapshot

__all__ = ["ELECTION_TIMEOUT_MS", "FETCH_TIMEOUT_MS", "OFFLINE", "ONLINE_STANDIN", "ONLINE_VOTER",
           "OperatorSequence", "SLOW_EVENT_THRESHOLD_MS", "Step", "TOKEN_SECRET_PLACEHOLDER",
           "controller_dir_placeholder", "offline_sequence", "online_voter_sequence",
           "operator_sequence"]

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

_DISTINCT_IDS_NOTE = ("Controller node ids must differ from every broker id (brokers and "
                      "controllers share one id space in KRaft).")
TOKEN_SECRET_PLACEHOLDER = "<the same secret as the brokers' delegation.token.secret.key>"
"""What `delegation.token.secret.key` is printed as: never a value (design I7)."""

_SOURCE = ("Kafka 3.9 documentation, operations: \"ZooKeeper to KRaft Migration\" "
           "(https://kafka.apache.org/39/documentation.html#kraft_zk_migration)")
_OFFLINE_SOURCE = ("zk2kraft's offline rehearsal (3.9.1 and 4.1.1 nodes on the migrated log: "
                   "docs/design.md, \"Offline migration\") and Kafka's KRaft configuration "
                   "(https://kafka.apache.org/documentation/#kraft_config)")
_KRAFT_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
_CONTROLLER_SUPER_USERS = ("<the brokers' super.users, and the principal brokers connect with on "
                           "the {listener} listener (User:ANONYMOUS over PLAINTEXT)>")
_UNCLEAN_SHUTDOWN = ("Proceeding to do an unclean shutdown as all the controlled shutdown "
                     "attempts failed")


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
        target_kafka: the release the nodes run after the migration (`3.9`, or `4.x` offline).
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


def _voters_string(voters: Mapping[int, tuple[str, int] | None]) -> str:
    return ",".join(f"{n}@{_address(n, a)}" for n, a in voters.items())


def _bootstrap_string(voters: str) -> str:
    """The `host:port` list of a `controller.quorum.voters` string (Kafka's tools'
    --bootstrap-controller value)."""
    return ",".join(v.split("@", 1)[1] for v in voters.split(","))


def _controller_base(node_id: int, address: tuple[str, int] | None, directory: str, *,
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
    return f"{_host(address[0])}:{address[1]}"


def _host(host: str) -> str:
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


def _broker_protocol_map(snapshot: ClusterSnapshot, broker_id: int, listener: str,
                         protocol: str) -> str:
    broker = snapshot.brokers[broker_id]
    pairs = {e.listener: e.security_protocol for e in broker.endpoints}
    pairs[listener] = protocol
    return ",".join(f"{k}:{v}" for k, v in pairs.items())


def _migration_controllers(
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
        props = _controller_base(node_id, address, directories[node_id], voters=voters,
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
        _DISTINCT_IDS_NOTE,
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


def _migrating_brokers(snapshot: ClusterSnapshot, *, voters: str, listener: str, protocol: str,
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


def operator_sequence(
    snapshot: ClusterSnapshot,
    spec: StandInSpec,
    *,
    metadata_version: MetadataVersion,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
) -> OperatorSequence:
    """Build the stand-in path's sequence for this cluster and these controllers.

    Args:
        snapshot: the tree `plan` read (brokers from /brokers/ids, /cluster/id, tokens).
        spec: the checked stand-in flags: who zk2kraft is and which controllers follow it.
        metadata_version: the KRaft metadata.version the migration writes.
        zookeeper: the `--zookeeper` connect string, as the controllers must use it.
        controller_listener: the controllers' listener name (`controller.listener.names`).
    """
    voters = _voters_string(spec.voters)
    mv = metadata_version.name
    others = {n: a for n, a in spec.voters.items() if n != spec.node_id}
    controllers, notes = _migration_controllers(
        snapshot, others, {n: controller_dir_placeholder(n) for n in others}, voters=voters,
        zookeeper=zookeeper, listener=controller_listener, protocol=spec.protocol,
        election_timeout=True)
    brokers = _migrating_brokers(snapshot, voters=voters, listener=controller_listener,
                                 protocol=spec.protocol, mv=mv)
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    notes = [
        "Kafka's own sample configurations use controller.quorum.bootstrap.servers (dynamic "
        "voters); the stand-in leads a static quorum, so every node here names the voters "
        "with controller.quorum.voters, zk2kraft's slot included.",
        *notes,
    ]
    return OperatorSequence(ONLINE_STANDIN, cluster_id, mv, "3.9", spec, controllers, brokers,
                            (),
                            _standin_steps(spec, voters=voters, mv=mv, zookeeper=zookeeper,
                                           cluster_id=cluster_id,
                                           controller_ids=list(controllers),
                                           listener=controller_listener),
                            tuple(notes))


def online_voter_sequence(
    snapshot: ClusterSnapshot,
    voter_dirs: Sequence[tuple[int, Path]],
    *,
    metadata_version: MetadataVersion,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
) -> OperatorSequence:
    """The online path into local voter directories (`--voter ID=DIR`): the controllers start
    after the cutover, on the directories zk2kraft wrote (their addresses are the operator's)."""
    addresses: dict[int, tuple[str, int] | None] = {n: None for n, _ in voter_dirs}
    dirs = {n: str(d) for n, d in voter_dirs}
    voters = _voters_string(addresses)
    mv = metadata_version.name
    controllers, notes = _migration_controllers(
        snapshot, addresses, dirs, voters=voters, zookeeper=zookeeper,
        listener=controller_listener, protocol="PLAINTEXT", election_timeout=False)
    brokers = _migrating_brokers(snapshot, voters=voters, listener=controller_listener,
                                 protocol="PLAINTEXT", mv=mv)
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    voter_flags = " ".join(f"--voter {n}={d}" for n, d in dirs.items())
    return OperatorSequence(ONLINE_VOTER, cluster_id, mv, "3.9", None, controllers, brokers, (),
                            _voter_steps(voter_flags=voter_flags, voters=voters, mv=mv,
                                         zookeeper=zookeeper, dirs=dirs),
                            (*_address_notes(), *notes))


def _address_notes() -> tuple[str, ...]:
    return ("<controller N's host:port> is the address each controller listens on for the "
            "controller listener (its entry in controller.quorum.voters); zk2kraft does not "
            "know it from --voter ID=DIR.",)


_REVERT_BROKERS = ("on each broker remove zookeeper.metadata.migration.enable, "
                   "controller.quorum.voters, controller.listener.names and the "
                   "controller listener's entry in listener.security.protocol.map, then "
                   "roll the brokers")


def _revert_zk(zookeeper: str, voter_flags: str, also: str) -> str:
    return (f"stop every controller{also}, then `zk2kraft rollback --zookeeper {zookeeper} "
            f"{voter_flags}` (removes the /controller claim and /migration in one fenced "
            "multi-op and lifts /controller_epoch above the KRaft epochs in the partition "
            "states; Kafka's docs: delete /controller, then get and delete /migration, quickly)")


def _prepare_step(mv: str) -> Step:
    return Step("Prepare",
                (f"run Kafka 3.9.1 on every broker with inter.broker.protocol.version={mv} (the "
                 "metadata.version the controllers will use); do not change it until the "
                 "migration is finalised",
                 "optionally log org.apache.kafka.metadata.migration at TRACE on the "
                 "controllers"),
                "nothing to undo: the cluster has not left ZooKeeper mode")


def _migration_mode_step(voters: str) -> Step:
    return Step("Put the brokers in migration mode",
                ("give each broker the properties listed for it above and roll the brokers one "
                 "at a time; ZooKeeper's controller keeps leading (nothing runs at "
                 f"{voters} yet)",),
                _REVERT_BROKERS)


def _to_kraft_step(revert_zk: str) -> Step:
    return Step("Move the brokers to KRaft",
                ("on each broker: replace broker.id with node.id (same id), add "
                 "process.roles=broker, remove zookeeper.connect and every zookeeper.* setting, "
                 "zookeeper.metadata.migration.enable, inter.broker.protocol.version and "
                 "control.plane.listener.name; keep controller.quorum.voters and "
                 "controller.listener.names; replace the AclAuthorizer with "
                 f"{_KRAFT_AUTHORIZER}; roll the brokers one at a time",
                 "expected at each broker's first KRaft start: STALE_BROKER_EPOCH at ERROR on "
                 "the broker (AssignmentsManager, retried) and on the active controller "
                 "(ControllerApis) while the broker reports its replicas' directories before its "
                 "own metadata image holds its new registration (the migrated log names no "
                 "directories); they stop once its metadata catches up"),
                "on each broker remove process.roles, replace node.id with broker.id and "
                "restore zookeeper.connect (and other zookeeper.* settings), keeping "
                "zookeeper.metadata.migration.enable=true, and roll the brokers; then "
                f"{revert_zk}; then {_REVERT_BROKERS} (a second roll)")


def _finalise_step(voters: str) -> Step:
    bootstrap = _bootstrap_string(voters)
    return Step("Finalise",
                ("remove zookeeper.metadata.migration.enable and zookeeper.connect from every "
                 "controller and restart the controllers one at a time; the active controller "
                 "records ZkMigrationState POST_MIGRATION",
                 "before restarting the next controller, wait until the restarted one has "
                 f"caught up: kafka-metadata-quorum.sh --bootstrap-controller {bootstrap} "
                 "describe --replication lists it with Lag 0 (restarting the next one earlier "
                 "costs elections and a time with no leader)",
                 "ZooKeeper can then be deprovisioned (if nothing else uses it)"),
                None)


def _standin_steps(spec: StandInSpec, *, voters: str, mv: str, zookeeper: str,
                   cluster_id: str | None, controller_ids: Sequence[int],
                   listener: str) -> tuple[Step, ...]:
    standin = f"{spec.node_id}@{_host(spec.listen[0])}:{spec.listen[1]}={spec.log_dir}"
    cid = cluster_id or "<the id in /cluster/id>"
    others = " ".join(f"--controller {n}@{_host(h)}:{p}" for n, (h, p) in spec.voters.items()
                      if n != spec.node_id)
    revert_zk = _revert_zk(zookeeper, f"--voter {spec.node_id}={spec.log_dir}",
                           " (and zk2kraft if it still runs)")
    return (
        _prepare_step(mv),
        _migration_mode_step(voters),
        Step("Provision the controllers and start zk2kraft's stand-in",
             (f"format each controller's metadata.log.dir with the cluster's id: "
              f"kafka-storage.sh format --cluster-id={cid} --release-version {mv} "
              "--config controller.properties (static voters: no --standalone, no "
              "--initial-controllers)",
              f"start zk2kraft: zk2kraft migrate --zookeeper {zookeeper} --standin {standin} "
              f"{others} --metadata-version {mv} --cutover manual --json report.json "
              "(it listens on its slot and asks for votes for up to 120 s)",
              f"then, within those 120 s, start controllers "
              f"{', '.join(map(str, controller_ids))} with their properties above; they create "
              "an empty /migration (zk2kraft takes it over at the fence), vote for the "
              "stand-in and replicate the pre-copy and the mirror to their own disks"),
             "before the fence (pre-copy, mirror): stop zk2kraft (Ctrl-C) and the controllers, "
             "clear their metadata.log.dirs and zk2kraft's; ZooKeeper's controller never "
             f"stopped; then, to leave migration mode, {_REVERT_BROKERS}"),
        Step("Cut over",
             ("press Enter in zk2kraft's terminal or kill -USR1 its pid: it fences ZooKeeper's "
              "controller, commits the final delta and ZkMigrationState MIGRATION, writes "
              "/migration and resigns (EndQuorumEpoch); a controller is elected, claims "
              "/controller and enters dual-write (it sends the brokers full metadata)",
              f"check: zk2kraft verify --zookeeper {zookeeper} --voter N=DIR (a controller's "
              f"metadata.log.dir) --quorum-voters {voters}"),
             f"{revert_zk}; then {_REVERT_BROKERS}"),
        Step(f"Give the stand-in's slot {spec.node_id} to a real controller",
             (f"after zk2kraft exited, start a controller with node.id={spec.node_id}, "
              f"listeners={listener}://{_host(spec.listen[0])}:{spec.listen[1]}, the other "
              f"controllers' properties and the stand-in's directory "
              f"{spec.log_dir} as its metadata.log.dir and log.dirs; it follows and catches up",),
             f"as for step 4: {revert_zk}; then {_REVERT_BROKERS}"),
        _to_kraft_step(revert_zk),
        _finalise_step(voters),
    )


def _voter_steps(*, voter_flags: str, voters: str, mv: str, zookeeper: str,
                 dirs: Mapping[int, str]) -> tuple[Step, ...]:
    revert_zk = _revert_zk(zookeeper, voter_flags, "")
    return (
        _prepare_step(mv),
        _migration_mode_step(voters),
        Step("Pre-copy and mirror into the voter directories",
             (f"configure controllers {', '.join(map(str, dirs))} with their properties above "
              "but do not start them and do not run kafka-storage format: zk2kraft writes "
              "their directories, meta.properties included",
              f"zk2kraft migrate --zookeeper {zookeeper} {voter_flags} --metadata-version {mv} "
              "--cutover manual --on-cutover '<a command that starts the controllers>' "
              "--json report.json (it holds each directory's .lock until the cutover)"),
             "before the cutover: stop zk2kraft (Ctrl-C) and clear the voter directories; "
             f"ZooKeeper's controller never stopped; then, to leave migration mode, "
             f"{_REVERT_BROKERS}"),
        Step("Cut over",
             ("press Enter in zk2kraft's terminal or kill -USR1 its pid: it fences ZooKeeper's "
              "controller, commits the final delta and ZkMigrationState MIGRATION, writes "
              "/migration, releases the locks and runs --on-cutover; a controller is elected, "
              "claims /controller and enters dual-write",
              f"check: zk2kraft verify --zookeeper {zookeeper} {voter_flags}"),
             f"{revert_zk}; then {_REVERT_BROKERS}"),
        _to_kraft_step(revert_zk),
        _finalise_step(voters),
    )


def offline_sequence(
    snapshot: ClusterSnapshot,
    voter_dirs: Sequence[tuple[int, Path]],
    *,
    metadata_version: MetadataVersion,
    target_kafka: str,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
) -> OperatorSequence:
    """The offline path: every broker stopped, `migrate --offline` into the voter directories,
    then plain KRaft controllers and the same brokers in KRaft mode.

    Args:
        voter_dirs: the `--voter` pairs `migrate --offline` gets (each controller's directory).
        target_kafka: `3.9` or `4.x` (what the nodes run afterwards).
    """
    addresses: dict[int, tuple[str, int] | None] = {n: None for n, _ in voter_dirs}
    dirs = {n: str(d) for n, d in voter_dirs}
    voters = _voters_string(addresses)
    mv = metadata_version.name
    four = target_kafka != "3.9"
    acls = bool(snapshot.acls)
    tokens = bool(snapshot.delegation_tokens)
    controllers: dict[int, dict[str, str]] = {}
    for node_id, address in addresses.items():
        props = _controller_base(node_id, address, dirs[node_id], voters=voters,
                                 listener=controller_listener,
                                 protocol_map=f"{controller_listener}:PLAINTEXT")
        if acls:
            props["authorizer.class.name"] = _KRAFT_AUTHORIZER
            props["super.users"] = _CONTROLLER_SUPER_USERS.format(listener=controller_listener)
        if tokens:
            # without it a KRaft controller publishing the migrated tokens faults on the HMAC
            # ("Encountered metadata publishing fault ... DelegationTokenManager.createHmac")
            props["delegation.token.secret.key"] = TOKEN_SECRET_PLACEHOLDER
        if four:
            props["controller.performance.always.log.threshold.ms"] = str(
                SLOW_EVENT_THRESHOLD_MS)
        controllers[node_id] = props
    broker_ids: set[int] = set()
    for topic in snapshot.topics.values():
        for replicas in topic.assignment.values():
            broker_ids.update(replicas)
    brokers: dict[int, dict[str, str]] = {}
    for broker_id in sorted(broker_ids):
        props = {
            "process.roles": "broker",
            "node.id": str(broker_id),
            "controller.quorum.voters": voters,
            "controller.listener.names": controller_listener,
            "listener.security.protocol.map": (
                f"<broker {broker_id}'s listener.security.protocol.map>,"
                f"{controller_listener}:PLAINTEXT"),
        }
        if acls:
            props["authorizer.class.name"] = _KRAFT_AUTHORIZER
        brokers[broker_id] = props
    removals = ("broker.id", "zookeeper.connect", "every other zookeeper.* setting",
                "zookeeper.metadata.migration.enable", "inter.broker.protocol.version",
                "control.plane.listener.name")
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    voter_flags = " ".join(f"--voter {n}={d}" for n, d in dirs.items())
    notes = [
        *_address_notes(),
        f"<broker N's listener.security.protocol.map> is the broker's current map (Kafka's "
        "default when it sets none: PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
        f"SASL_SSL:SASL_SSL); the {controller_listener} entry is added to it. Its listeners, "
        "advertised.listeners, inter.broker.listener.name and log.dirs stay as they are: "
        "ZooKeeper lost them with the broker's registration.",
        _DISTINCT_IDS_NOTE,
        "Kafka 3.9 and 4.x take the same log but for the metadata.version (--target-kafka, "
        "--metadata-version) and the PartitionRecord version; Kafka 4.x has no migration code "
        "and cannot go back to ZooKeeper at all.",
    ]
    if acls:
        notes.append("ZooKeeper holds ACLs: the nodes use Kafka's KRaft authorizer "
                     f"({_KRAFT_AUTHORIZER}); brokers keep their super.users. The controllers "
                     "authorize what brokers send them (their registration, and the admin "
                     "requests brokers forward), so the principal brokers use on the "
                     f"{controller_listener} listener must be a super user there, beside the "
                     "brokers' own super users.")
    if tokens:
        notes.append("ZooKeeper holds delegation tokens: give each controller the brokers' "
                     "delegation.token.secret.key (the tokens' HMACs derive from it; without "
                     "it the controller faults publishing them); it is shown as a placeholder, "
                     "never a value. Brokers keep theirs.")
    if four:
        notes.append("Kafka 4.x controllers log ERROR \"Exceptionally slow controller event\" "
                     "for any event over controller.performance.always.log.threshold.ms (2000 "
                     "by default); the first replay of the migrated log on a cold JVM is one "
                     "such event on a busy host (0.7-1.9 s measured on a loaded 2-core host), "
                     "whoever wrote the log. The threshold printed above keeps that from "
                     "being an ERROR; it changes only what Kafka logs. Starting the "
                     "controllers before the brokers (the start step) keeps their first replay "
                     "off a host busy with brokers.")
    return OperatorSequence(OFFLINE, cluster_id, mv, target_kafka, None, controllers, brokers,
                            removals,
                            _offline_steps(voter_flags=voter_flags, voters=voters, mv=mv,
                                           zookeeper=zookeeper, target_kafka=target_kafka,
                                           broker_ids=sorted(broker_ids)),
                            tuple(notes))


def _offline_steps(*, voter_flags: str, voters: str, mv: str, zookeeper: str,
                   target_kafka: str, broker_ids: Sequence[int]) -> tuple[Step, ...]:
    target = "" if target_kafka == "3.9" else f" --target-kafka {target_kafka}"
    release = {"3.9": "Kafka 3.9 (3.9.1 rehearsed)", "4.0": "Kafka 4.0",
               "4.1": "Kafka 4.1 (4.1.1 rehearsed)"}.get(
        target_kafka, "Kafka 4.0 or 4.1 (4.1.1 rehearsed)")
    bootstrap = _bootstrap_string(voters)
    untouched = ("nothing to undo: ZooKeeper is untouched; start the brokers again in "
                 "ZooKeeper mode with their old configuration")
    before_start = ("until the KRaft nodes first start: start the old brokers in ZooKeeper mode "
                    "with their old configuration (ZooKeeper is untouched; delete the "
                    "directory.id line prepare-broker added to be exact; the voter directories "
                    "can simply be deleted)")
    after_start = ("not rehearsed: whatever clients wrote in KRaft mode exists only in the "
                   "KRaft log; copy the brokers' data directories before the KRaft start if a "
                   "way back must stay open")
    if target_kafka != "3.9":
        after_start += "; Kafka 4.x brokers cannot run in ZooKeeper mode at all"
    return (
        Step("Stop every broker",
             (f"before, while the cluster still runs: zk2kraft plan --zookeeper {zookeeper} "
              "(without --offline) shows what would block, with time to fix it",
              "stop producers and consumers, then the brokers one by one (a clean stop: "
              "controlled shutdown moves leadership away from each broker as it goes), the "
              "ZooKeeper controller last if you know which one it is",
              f"expected: the last brokers to stop log \"{_UNCLEAN_SHUTDOWN}\": with every "
              "other broker stopped there is nowhere to move their leadership",
              "wait until /brokers/ids is empty and /controller is gone; keep ZooKeeper "
              "running"),
             untouched),
        Step("Plan",
             (f"zk2kraft plan --zookeeper {zookeeper} --offline{target} --metadata-version "
              f"{mv} {voter_flags} --html plan.html: it must exit 0 (it refuses while a broker "
              "is registered or /controller is held; PARTITION_OFFLINE for a leader -1 "
              "partition is expected with the brokers stopped). --voter is optional for the "
              "checks; it is what prints this sequence",),
             untouched),
        Step("Migrate",
             (f"zk2kraft migrate --zookeeper {zookeeper} --offline{target} --metadata-version "
              f"{mv} {voter_flags} (add --password-encoder-secret when brokers have encrypted "
              "dynamic passwords)",
              "copy each voter directory to its controller if it was written elsewhere "
              "(rsync -a; keep the node id)"),
             untouched),
        Step("Verify",
             (f"zk2kraft verify --zookeeper {zookeeper} --offline {voter_flags}: exit 0 is "
              "parity",),
             untouched),
        Step("Prepare each broker's log dirs",
             tuple(f"on broker {b}'s host, broker stopped: zk2kraft prepare-broker --log-dirs "
                   f"<broker {b}'s log.dirs>" for b in broker_ids)
             + ("add --dry-run first to see the directory.id it would write and the "
                "meta.properties it found (cluster.id, broker.id) without changing anything; it "
                "refuses while the broker runs",),
             before_start),
        Step("Configure the controllers",
             (f"install {release} on every controller host",
              "give each controller the properties listed for it above; do not run "
              "kafka-storage format (migrate --offline wrote meta.properties with the "
              "cluster's id); no zookeeper.* settings"),
             before_start),
        Step("Configure the brokers",
             (f"install {release} on every broker host: it starts on the ZooKeeper-mode data "
              "dirs as they are (their meta.properties, with prepare-broker's directory.id)",
              "give each broker the properties listed for it above and remove the ones listed "
              "for removal; keep its log.dirs and listeners"),
             before_start),
        Step("Start",
             ("start every controller; wait until one leads: kafka-metadata-quorum.sh "
              f"--bootstrap-controller {bootstrap} describe --status shows a LeaderId and "
              "every voter",
              "then start every broker at once (in any order)"),
             after_start),
        Step("Check",
             ("each broker logs that it registered and was unfenced; kafka-topics.sh "
              "--bootstrap-server <a broker> --describe --under-replicated-partitions prints "
              "nothing once the brokers caught up (seconds after the last broker starts: the "
              "offline log names no partition leader, so each leader is elected once its broker "
              "registered), and --unavailable-partitions prints nothing",
              "leadership first sits with the first in-sync broker to be unfenced; the "
              "preferred leaders come back through auto.leader.rebalance.enable (Kafka's "
              "default, every 300 s) or at once with kafka-leader-election.sh "
              "--bootstrap-server <a broker> --election-type PREFERRED "
              "--all-topic-partitions once no partition is under-replicated",
              "consumer groups resume from their committed offsets; SCRAM clients log in; "
              "kafka-acls.sh --list and kafka-configs.sh --describe show what ZooKeeper held",
              "expected, Kafka's own: ControllerApis may log a ControllerRegistration answered "
              "NotControllerException at ERROR while the new leader replays the log (retried)"),
             after_start),
    )
