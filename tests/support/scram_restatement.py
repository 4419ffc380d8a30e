"""The SCRAM restatement zk2kraft writes after a migration transaction that removed a SCRAM
credential, as the tests expect it from the design (docs/design/online-run.md, "Kafka 3.9.1 can
lose a SCRAM credential on takeover"): Kafka 3.9.1's loader would drop a mechanism's credentials
when a removal comes first in its map, so every live credential is stated again in a transaction of
its own right after the migration's EndTransactionRecord.
"""

from __future__ import annotations

RESTATEMENT = "SCRAM credentials restated after ZK Migration"
"""The restatement transaction's name (BeginTransactionRecord.name), written out by hand."""


def migration_types(types: list[str]) -> list[str]:
    """`types` (a log's record types in order) without the trailing restatement transaction.

    Asserts the restatement is there exactly when the migration transaction holds a
    `RemoveUserScramCredentialRecord`, and that it holds nothing but credentials.
    """
    ends = [i for i, t in enumerate(types) if t == "END_TRANSACTION_RECORD"]
    begins = [i for i, t in enumerate(types) if t == "BEGIN_TRANSACTION_RECORD"]
    removed = "REMOVE_USER_SCRAM_CREDENTIAL_RECORD" in types[: (ends[0] if ends else len(types))]
    if not (removed and len(begins) >= 2 and len(ends) >= 2):
        assert not removed or not ends, (
            "a SCRAM credential was removed in the migration transaction, but no restatement "
            "transaction follows it")
        return types
    start = begins[-1]
    tail = types[start:]
    assert tail[0] == "BEGIN_TRANSACTION_RECORD" and tail[-1] == "END_TRANSACTION_RECORD", tail
    assert set(tail[1:-1]) == {"USER_SCRAM_CREDENTIAL_RECORD"}, tail
    assert start == ends[-2] + 1, "the restatement must follow the migration's EndTransaction"
    return types[:start]
