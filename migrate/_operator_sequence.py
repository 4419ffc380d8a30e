"""The operator's sequence for an online migration through the stand-in, exactly per node.

`zk2kraft plan --standin ... --controller ...` prints it and `plan --json` carries it under
`operator_sequence`. Pure: a `ClusterSnapshot`, the checked stand-in flags and the
metadata.version in, property lists and numbered steps out; nothing here reads or writes.

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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from migrate._standinargs import StandInSpec
from writers import MetadataVersion
from zkreader import ClusterSnapshot

__all__ = ["ELECTION_TIMEOUT_MS", "OperatorSequence", "Step", "TOKEN_SECRET_PLACEHOLDER",
           "operator_sequence"]

ELECTION_TIMEOUT_MS = 30000
"""The controllers' `controller.quorum.election.timeout.ms`: long, so that none of them stands
for election before the stand-in has won epoch 1 (a controller that wins first writes its own
bootstrap records); the value the stand-in's tests run real 3.9.1 controllers with."""

TOKEN_SECRET_PLACEHOLDER = "<the same secret as the brokers' delegation.token.secret.key>"
"""What `delegation.token.secret.key` is printed as: never a value (design I7)."""

_SOURCE = ("Kafka 3.9 documentation, operations: \"ZooKeeper to KRaft Migration\" "
           "(https://kafka.apache.org/39/documentation.html#kraft_zk_migration)")


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
        controllers: node id -> the properties that controller must run with (in print order).
        brokers: broker id (from /brokers/ids) -> its migration-mode properties.
        steps: the procedure, in order.
    """

    cluster_id: str | None
    metadata_version: str
    standin: StandInSpec
    controllers: Mapping[int, Mapping[str, str]]
    brokers: Mapping[int, Mapping[str, str]]
    steps: tuple[Step, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """The `operator_sequence` entry of `plan --json` (no secrets: placeholders only)."""
        return {
            "source": _SOURCE,
            "cluster_id": self.cluster_id,
            "metadata_version": self.metadata_version,
            "standin": {"node_id": self.standin.node_id,
                        "listen": f"{self.standin.listen[0]}:{self.standin.listen[1]}",
                        "log_dir": str(self.standin.log_dir)},
            "controllers": [{"node_id": n, "properties": dict(p)}
                            for n, p in self.controllers.items()],
            "brokers": [{"broker_id": n, "properties": dict(p)}
                        for n, p in self.brokers.items()],
            "steps": [s.to_json(i) for i, s in enumerate(self.steps, 1)],
            "notes": list(self.notes),
        }

    def lines(self) -> list[str]:
        """The same as plain text lines, for the terminal (properties as `key=value`)."""
        out = [f"Operator's sequence (after {_SOURCE})"]
        for node_id, props in self.controllers.items():
            out.append(f"controller {node_id}: controller.properties")
            out.extend(f"    {k}={v}" for k, v in props.items())
        for broker_id, props in self.brokers.items():
            out.append(f"broker {broker_id}: add to (or change in) server.properties")
            out.extend(f"    {k}={v}" for k, v in props.items())
        for i, step in enumerate(self.steps, 1):
            out.append(f"{i}. {step.title}")
            out.extend(f"     - {a}" for a in step.actions)
            out.append(f"     rollback: {step.rollback or 'none: this step cannot be undone'}")
        out.extend(f"note: {n}" for n in self.notes)
        return out


def _voters_string(spec: StandInSpec) -> str:
    return ",".join(f"{n}@{_host(h)}:{p}" for n, (h, p) in spec.voters.items())


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


def operator_sequence(
    snapshot: ClusterSnapshot,
    spec: StandInSpec,
    *,
    metadata_version: MetadataVersion,
    zookeeper: str,
    controller_listener: str = "CONTROLLER",
) -> OperatorSequence:
    """Build the sequence for this cluster and these controllers (module docstring).

    Args:
        snapshot: the tree `plan` read (brokers from /brokers/ids, /cluster/id, tokens).
        spec: the checked stand-in flags: who zk2kraft is and which controllers follow it.
        metadata_version: the KRaft metadata.version the migration writes.
        zookeeper: the `--zookeeper` connect string, as the controllers must use it.
        controller_listener: the controllers' listener name (`controller.listener.names`).
    """
    voters = _voters_string(spec)
    mv = metadata_version.name
    ibl, ibl_note = _inter_broker_listener(snapshot)
    tokens = bool(snapshot.delegation_tokens)
    # Kafka refuses a controller whose inter.broker.listener.name is not in its protocol map
    # (KafkaConfig.getInterBrokerListenerNameAndSecurityProtocol), so the brokers' listeners,
    # as their registrations map them, are mapped beside the controller listener
    listener_protocols = {controller_listener: spec.protocol}
    for broker_id in sorted(snapshot.brokers):
        for e in snapshot.brokers[broker_id].endpoints:
            listener_protocols.setdefault(e.listener, e.security_protocol)
    controller_map = ",".join(f"{k}:{v}" for k, v in listener_protocols.items())
    controllers: dict[int, dict[str, str]] = {}
    for node_id, (host, port) in spec.voters.items():
        if node_id == spec.node_id:
            continue
        props = {
            "process.roles": "controller",
            "node.id": str(node_id),
            "controller.quorum.voters": voters,
            "controller.listener.names": controller_listener,
            "listeners": f"{controller_listener}://{_host(host)}:{port}",
            "listener.security.protocol.map": controller_map,
            "controller.quorum.election.timeout.ms": str(ELECTION_TIMEOUT_MS),
            "zookeeper.metadata.migration.enable": "true",
            "zookeeper.connect": zookeeper,
            "inter.broker.listener.name": ibl,
        }
        if tokens:
            props["delegation.token.secret.key"] = TOKEN_SECRET_PLACEHOLDER
        controllers[node_id] = props
    brokers = {
        broker_id: {
            "broker.id": str(broker_id),
            "zookeeper.metadata.migration.enable": "true",
            "controller.quorum.voters": voters,
            "controller.listener.names": controller_listener,
            "listener.security.protocol.map": _broker_protocol_map(
                snapshot, broker_id, controller_listener, spec.protocol),
            "inter.broker.protocol.version": mv,
        }
        for broker_id in sorted(snapshot.brokers)
    }
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    notes = [
        "Kafka's own sample configurations use controller.quorum.bootstrap.servers (dynamic "
        "voters); the stand-in leads a static quorum, so every node here names the voters "
        "with controller.quorum.voters, zk2kraft's slot included.",
        "Controller node ids must differ from every broker id (brokers and controllers share "
        "one id space in KRaft).",
    ]
    if ibl_note:
        notes.append(ibl_note)
    if tokens:
        notes.append("ZooKeeper holds delegation tokens: give each controller the brokers' "
                     "delegation.token.secret.key (the tokens' HMACs derive from it); it is "
                     "shown as a placeholder, never a value.")
    if spec.protocol.startswith("SASL"):
        notes.append(f"The controller listener is {spec.protocol}: keep the listener's JAAS "
                     "configuration (sasl.mechanism.controller.protocol, listener.name."
                     f"{controller_listener.lower()}.plain.sasl.jaas.config) on every node.")
    return OperatorSequence(cluster_id, mv, spec, controllers, brokers,
                            _steps(spec, voters=voters, mv=mv, zookeeper=zookeeper,
                                   cluster_id=cluster_id,
                                   controller_ids=list(controllers),
                                   listener=controller_listener),
                            tuple(notes))


def _steps(spec: StandInSpec, *, voters: str, mv: str, zookeeper: str, cluster_id: str | None,
           controller_ids: Sequence[int], listener: str) -> tuple[Step, ...]:
    standin = f"{spec.node_id}@{_host(spec.listen[0])}:{spec.listen[1]}={spec.log_dir}"
    cid = cluster_id or "<the id in /cluster/id>"
    others = " ".join(f"--controller {n}@{_host(h)}:{p}" for n, (h, p) in spec.voters.items()
                      if n != spec.node_id)
    revert_brokers = ("on each broker remove zookeeper.metadata.migration.enable, "
                      "controller.quorum.voters, controller.listener.names and the "
                      "controller listener's entry in listener.security.protocol.map, then "
                      "roll the brokers")
    revert_zk = (f"stop every controller (and zk2kraft if it still runs), then `zk2kraft "
                 f"rollback --zookeeper {zookeeper} --voter {spec.node_id}={spec.log_dir}` "
                 "(removes the /controller claim and /migration in one fenced multi-op and "
                 "lifts /controller_epoch above the KRaft epochs in the partition states; "
                 "Kafka's docs: delete /controller, then get and delete /migration, quickly)")
    return (
        Step("Prepare",
             (f"run Kafka 3.9.1 on every broker with inter.broker.protocol.version={mv} (the "
              "metadata.version the controllers will use); do not change it until the "
              "migration is finalised",
              "optionally log org.apache.kafka.metadata.migration at TRACE on the controllers"),
             "nothing to undo: the cluster has not left ZooKeeper mode"),
        Step("Put the brokers in migration mode",
             ("give each broker the properties listed for it above and roll the brokers one at "
              "a time; ZooKeeper's controller keeps leading (nothing runs at "
              f"{voters} yet)",),
             revert_brokers),
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
             f"stopped; then, to leave migration mode, {revert_brokers}"),
        Step("Cut over",
             ("press Enter in zk2kraft's terminal or kill -USR1 its pid: it fences ZooKeeper's "
              "controller, commits the final delta and ZkMigrationState MIGRATION, writes "
              "/migration and resigns (EndQuorumEpoch); a controller is elected, claims "
              "/controller and enters dual-write (it sends the brokers full metadata)",
              f"check: zk2kraft verify --zookeeper {zookeeper} --voter N=DIR (a controller's "
              f"metadata.log.dir) --quorum-voters {voters}"),
             f"{revert_zk}; then {revert_brokers}"),
        Step(f"Give the stand-in's slot {spec.node_id} to a real controller",
             (f"after zk2kraft exited, start a controller with node.id={spec.node_id}, "
              f"listeners={listener}://{_host(spec.listen[0])}:{spec.listen[1]}, the other "
              f"controllers' properties and the stand-in's directory "
              f"{spec.log_dir} as its metadata.log.dir; it follows and catches up",),
             f"as for step 4: {revert_zk}; then {revert_brokers}"),
        Step("Move the brokers to KRaft",
             ("on each broker: replace broker.id with node.id (same id), add "
              "process.roles=broker, remove zookeeper.connect and every zookeeper.* setting, "
              "zookeeper.metadata.migration.enable, inter.broker.protocol.version and "
              "control.plane.listener.name; keep controller.quorum.voters and "
              "controller.listener.names; replace the AclAuthorizer with "
              "org.apache.kafka.metadata.authorizer.StandardAuthorizer; roll the brokers one "
              "at a time",),
             "on each broker remove process.roles, replace node.id with broker.id and restore "
             "zookeeper.connect (and other zookeeper.* settings), keeping "
             "zookeeper.metadata.migration.enable=true, and roll the brokers; then "
             f"{revert_zk}; then {revert_brokers} (a second roll)"),
        Step("Finalise",
             ("remove zookeeper.metadata.migration.enable and zookeeper.connect from every "
              "controller and restart the controllers one at a time; the active controller "
              "records ZkMigrationState POST_MIGRATION",
              "ZooKeeper can then be deprovisioned (if nothing else uses it)"),
             None),
    )
