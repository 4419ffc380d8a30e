"""LogState: the framing a resume reads back from the log (is the "ZK Migration" transaction
open, was ZkMigrationStateRecord written). Records written by hand from Kafka's definitions."""

from __future__ import annotations

from migrate.online.mirror_delta import LogState
from migrate.translate.framing import scram_restatement_records
from writers import MetadataRecord

HEADER = [
    MetadataRecord("FEATURE_LEVEL_RECORD", 0, {"name": "metadata.version", "featureLevel": 21}),
    MetadataRecord("BEGIN_TRANSACTION_RECORD", 0, {"name": "ZK Migration"}),
    MetadataRecord("TOPIC_RECORD", 0, {"name": "a", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"}),
]


def test_an_empty_log_has_no_transaction_and_no_migration_state() -> None:
    s = LogState()
    assert not s.transaction_open and s.migration_state is None


def test_a_pre_copy_leaves_the_transaction_open() -> None:
    s = LogState()
    s.apply(HEADER)
    assert s.transaction_open and s.migration_state is None


def test_closing_records_are_seen() -> None:
    s = LogState()
    s.apply(HEADER + [MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 1}),
                      MetadataRecord("END_TRANSACTION_RECORD", 0, {})])
    assert not s.transaction_open and s.migration_state == 1


def test_an_aborted_transaction_is_closed() -> None:
    s = LogState()
    s.apply(HEADER + [MetadataRecord("ABORT_TRANSACTION_RECORD", 0, {})])
    assert not s.transaction_open


# -- the SCRAM restatement (docs/design/online-run.md, "Kafka 3.9.1 can lose a SCRAM credential on
# takeover")

def _scram(name: str) -> MetadataRecord:
    return MetadataRecord("USER_SCRAM_CREDENTIAL_RECORD", 0, {
        "name": name, "mechanism": 1, "salt": b"s", "storedKey": b"k", "serverKey": b"v",
        "iterations": 4096})


REMOVE = MetadataRecord("REMOVE_USER_SCRAM_CREDENTIAL_RECORD", 0,
                        {"name": "churn-user-0", "mechanism": 1})
TRAILER = [MetadataRecord("ZK_MIGRATION_STATE_RECORD", 0, {"zkMigrationState": 1}),
           MetadataRecord("END_TRANSACTION_RECORD", 0, {})]


def test_a_migration_without_scram_removals_needs_no_restatement() -> None:
    s = LogState()
    s.apply(HEADER + [_scram("alice"), _scram("churn-user-0")] + TRAILER)
    assert not s.scram_restatement_due


def test_a_removal_is_due_only_once_the_migration_transaction_closed() -> None:
    s = LogState()
    s.apply(HEADER + [_scram("alice"), _scram("churn-user-0"), REMOVE])
    assert not s.scram_restatement_due  # still open: the drain appends the trailer first
    s.apply(TRAILER)
    assert s.scram_restatement_due


def test_the_restatement_transaction_settles_it_and_an_aborted_one_does_not() -> None:
    s = LogState()
    s.apply(HEADER + [_scram("alice"), REMOVE] + TRAILER)
    s.apply(scram_restatement_records([_scram("alice")])[:-1]
            + [MetadataRecord("ABORT_TRANSACTION_RECORD", 0, {})])
    assert s.scram_restatement_due
    s.apply(scram_restatement_records([_scram("alice")]))
    assert not s.scram_restatement_due and not s.transaction_open


def test_the_restatement_is_its_own_named_transaction() -> None:
    records = scram_restatement_records([_scram("alice"), _scram("bob")])
    assert [r.type for r in records] == [
        "BEGIN_TRANSACTION_RECORD", "USER_SCRAM_CREDENTIAL_RECORD",
        "USER_SCRAM_CREDENTIAL_RECORD", "END_TRANSACTION_RECORD"]
    # the name, written out by hand: the tests and docs name the transaction so
    assert records[0].data == {"name": "SCRAM credentials restated after ZK Migration"}
    assert scram_restatement_records([]) == []
