"""Where the log's framing stands after a replay: the one thing a resume asks of the log that
the shared `verify.MetadataImage` does not answer.

What the log *holds* is the image (`verify.apply_records`); every delta, per notified entity or
over the whole tree after a session expiry or a resume, is
`migrate.translate.delta.delta_records`
against it (the whole tree with `resync_keys(image, snapshot)`, so what only the log still holds
gets its removal record). The framing records are no entity: whether the "ZK Migration"
transaction is still open, and whether `ZkMigrationStateRecord` was written, decides whether a
resumed run may append to the log and whether its drain is already done.

One more framing fact: whether the SCRAM credentials must be stated again after the transaction
(`scram_restatement_due`). Kafka 3.9.1 loads the whole "ZK Migration" transaction as one
`MetadataDelta` on an empty image, and its `ScramDelta.apply` drops a mechanism's user map when
a removal leaves it empty, so the puts that come after it in `HashMap` order land in a map the
new image no longer holds: a SCRAM user removed during the mirror can erase every other
credential of its mechanism from the controllers' image (and, through SYNC_KRAFT_TO_ZK, from
ZooKeeper). The drain therefore writes the live credentials again in a transaction of their own
(`scram_restatement_records`): Kafka applies the migration's delta before it, and replays the
credentials as a new delta on that image, which puts them back (docs/design/online-run.md, "Kafka
3.9.1 can lose a SCRAM credential on takeover").
"""

from __future__ import annotations

from collections.abc import Iterable

from migrate.translate.framing import SCRAM_RESTATEMENT_TRANSACTION_NAME
from writers import ControlRecord, MetadataRecord

__all__ = ["LogState"]


class LogState:
    """Is the "ZK Migration" transaction open, which `ZkMigrationStateRecord` came last, and is a
    SCRAM restatement due (a closed transaction removed a credential and no restatement
    transaction closed after it), as a replay of the log leaves them."""

    def __init__(self) -> None:
        self.transaction_open = False
        self.migration_state: int | None = None
        self._open_name: object = None
        self._scram_removed_in_transaction = False
        self.scram_restatement_due = False

    def apply(self, records: Iterable[MetadataRecord | ControlRecord]) -> None:
        """Replay records (as written to the log) into the state."""
        for r in records:
            if isinstance(r, ControlRecord):
                continue
            t = r.type
            if t == "BEGIN_TRANSACTION_RECORD":
                self.transaction_open = True
                self._open_name = r.data.get("name")
                self._scram_removed_in_transaction = False
            elif t == "END_TRANSACTION_RECORD":
                self.transaction_open = False
                if self._open_name == SCRAM_RESTATEMENT_TRANSACTION_NAME:
                    self.scram_restatement_due = False
                elif self._scram_removed_in_transaction:
                    self.scram_restatement_due = True
            elif t == "ABORT_TRANSACTION_RECORD":
                self.transaction_open = False
            elif t == "REMOVE_USER_SCRAM_CREDENTIAL_RECORD" and self.transaction_open:
                self._scram_removed_in_transaction = True
            elif t == "ZK_MIGRATION_STATE_RECORD":
                state = r.data["zkMigrationState"]
                assert isinstance(state, int)  # an int8 field: the codec decodes it to int
                self.migration_state = state
