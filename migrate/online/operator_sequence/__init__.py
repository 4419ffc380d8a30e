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
timeout so that the stand-in wins the first election (docs/design/standin.md).

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
  loaded log on a cold JVM is one such event (measured: docs/design/offline.md,
  "Exceptionally slow controller event"), so the 4.x controllers get a higher threshold: it changes
  only what Kafka logs at ERROR.
"""

from migrate.online.operator_sequence.common import (
    BROKER_METADATA_ROLL,
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    OFFLINE,
    ONLINE_STANDIN,
    ONLINE_VOTER,
    REVERT_BROKERS_FETCHED,
    SLOW_EVENT_THRESHOLD_MS,
    TOKEN_SECRET_PLACEHOLDER,
    OperatorSequence,
    Step,
    controller_dir_placeholder,
    start_over,
)
from migrate.online.operator_sequence.offline import offline_sequence
from migrate.online.operator_sequence.online import online_voter_sequence, operator_sequence

__all__ = ["BROKER_METADATA_ROLL", "ELECTION_TIMEOUT_MS", "FETCH_TIMEOUT_MS", "OFFLINE",
           "ONLINE_STANDIN", "ONLINE_VOTER", "OperatorSequence", "REVERT_BROKERS_FETCHED",
           "SLOW_EVENT_THRESHOLD_MS", "Step", "TOKEN_SECRET_PLACEHOLDER",
           "controller_dir_placeholder", "offline_sequence", "online_voter_sequence",
           "operator_sequence", "start_over"]
