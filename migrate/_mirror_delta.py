"""Where the log's framing stands after a replay: the one thing a resume asks of the log that
the shared `verify.MetadataImage` does not answer.

What the log *holds* is the image (`verify.apply_records`); every delta, per notified entity or
over the whole tree after a session expiry or a resume, is `migrate.entities.delta_records`
against it (the whole tree with `resync_keys(image, snapshot)`, so what only the log still holds
gets its removal record). The framing records are no entity: whether the "ZK Migration"
transaction is still open, and whether `ZkMigrationStateRecord` was written, decides whether a
resumed run may append to the log and whether its drain is already done.
"""

from __future__ import annotations

from collections.abc import Iterable

from writers import ControlRecord, MetadataRecord

__all__ = ["LogState"]


class LogState:
    """Is the "ZK Migration" transaction open, and which `ZkMigrationStateRecord` came last, as
    a replay of the log leaves them."""

    def __init__(self) -> None:
        self.transaction_open = False
        self.migration_state: int | None = None

    def apply(self, records: Iterable[MetadataRecord | ControlRecord]) -> None:
        """Replay records (as written to the log) into the state."""
        for r in records:
            if isinstance(r, ControlRecord):
                continue
            t = r.type
            if t == "BEGIN_TRANSACTION_RECORD":
                self.transaction_open = True
            elif t in ("END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"):
                self.transaction_open = False
            elif t == "ZK_MIGRATION_STATE_RECORD":
                state = r.data["zkMigrationState"]
                assert isinstance(state, int)  # an int8 field: the codec decodes it to int
                self.migration_state = state
