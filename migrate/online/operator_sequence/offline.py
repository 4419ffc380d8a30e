"""The offline path's sequence: every broker stopped, `migrate --offline`, then plain KRaft."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from migrate.online.operator_sequence.common import (
    DISTINCT_IDS_NOTE,
    KRAFT_AUTHORIZER,
    OFFLINE,
    SLOW_EVENT_THRESHOLD_MS,
    TOKEN_SECRET_PLACEHOLDER,
    OperatorSequence,
    Step,
    address_notes,
    bootstrap_string,
    controller_base,
    voters_string,
)
from writers import MetadataVersion
from zkreader import ClusterSnapshot

__all__ = [
    "offline_sequence",
]


_CONTROLLER_SUPER_USERS = ("<the brokers' super.users, and the principal brokers connect with on "
                           "the {listener} listener (User:ANONYMOUS over PLAINTEXT)>")


_UNCLEAN_SHUTDOWN = ("Proceeding to do an unclean shutdown as all the controlled shutdown "
                     "attempts failed")


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
    voters = voters_string(addresses)
    mv = metadata_version.name
    four = target_kafka != "3.9"
    acls = bool(snapshot.acls)
    tokens = bool(snapshot.delegation_tokens)
    controllers: dict[int, dict[str, str]] = {}
    for node_id, address in addresses.items():
        props = controller_base(node_id, address, dirs[node_id], voters=voters,
                                listener=controller_listener,
                                protocol_map=f"{controller_listener}:PLAINTEXT")
        if acls:
            props["authorizer.class.name"] = KRAFT_AUTHORIZER
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
            props["authorizer.class.name"] = KRAFT_AUTHORIZER
        brokers[broker_id] = props
    removals = ("broker.id", "zookeeper.connect", "every other zookeeper.* setting",
                "zookeeper.metadata.migration.enable", "inter.broker.protocol.version",
                "control.plane.listener.name")
    cluster_id = snapshot.cluster_id.cluster_id if snapshot.cluster_id is not None else None
    voter_flags = " ".join(f"--voter {n}={d}" for n, d in dirs.items())
    notes = [
        *address_notes(),
        f"<broker N's listener.security.protocol.map> is the broker's current map (Kafka's "
        "default when it sets none: PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,"
        f"SASL_SSL:SASL_SSL); the {controller_listener} entry is added to it. Its listeners, "
        "advertised.listeners, inter.broker.listener.name and log.dirs stay as they are: "
        "ZooKeeper lost them with the broker's registration.",
        DISTINCT_IDS_NOTE,
        "Kafka 3.9 and 4.x take the same log but for the metadata.version (--target-kafka, "
        "--metadata-version) and the PartitionRecord version; Kafka 4.x has no migration code "
        "and cannot go back to ZooKeeper at all.",
    ]
    if acls:
        notes.append("ZooKeeper holds ACLs: the nodes use Kafka's KRaft authorizer "
                     f"({KRAFT_AUTHORIZER}); brokers keep their super.users. The controllers "
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
               "4.1": "Kafka 4.1 (4.1.1 rehearsed)", "4.2": "Kafka 4.2", "4.3": "Kafka 4.3",
               "4.4": "Kafka 4.4 (4.4.0)"}.get(target_kafka, "Kafka 4.4 (4.4.0)")
    bootstrap = bootstrap_string(voters)
    untouched = ("nothing to undo: ZooKeeper is untouched; start the brokers again in "
                 "ZooKeeper mode with their old configuration")
    before_start = ("until the KRaft nodes first start: start the old brokers in ZooKeeper mode "
                    "with their old configuration (ZooKeeper is untouched; delete the "
                    "directory.id line prepare-broker added to be exact; the partition.metadata "
                    "files it wrote hold ZooKeeper's own topic ids, as ZooKeeper-mode brokers "
                    "write them; the voter directories can simply be deleted)")
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
                   f"<broker {b}'s log.dirs> --zookeeper {zookeeper}" for b in broker_ids)
             + ("it checks every partition directory against the migrated topic ids and "
                "assignments: it writes the partition.metadata brokers older than 3.0 may have "
                "left out (Kafka would rename such a directory away as stray at its first "
                "KRaft start, and a single-replica partition would lose its data), and refuses, "
                "naming each, a directory whose topic id differs or whose partition is not "
                "assigned to that broker (exit 1, nothing written: move it out of the log dirs "
                "and run again)",
                "add --dry-run first to list every directory and what it would write, with a "
                "summary, without changing anything; --metadata-log <a copy of a voter "
                "directory> replaces --zookeeper where the broker host cannot reach ZooKeeper; "
                "it refuses while the broker runs"),
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
