"""The registry of entity kinds: one `EntityKind` entry per kind, in log order.

Each entry lives at the end of its kind's module and names everything the migration does with
the kind (`migrate.translate.kind` lists the roles). The generic code iterates `KINDS`:
`entities.py` (keys of a snapshot or image, records from nothing), `delta.py` (the diff against
the log's image) and, on the ZooKeeper side, `zkreader`'s `ZK_KINDS` (paths, keys of notified
znodes, re-reads). Adding a kind is its module's entry, its `ZkKind` and its tests;
`tests/unit/migrate/test_kinds.py` fails until every role is filled.

The order is the log's (Kafka 3.9's migration order, brokers first, a topic before its
partitions: invariant I2), the same as `zkreader.ENTITY_KINDS`.

Adding a kind, as the layering allows today (`zkreader` and `verify` cannot import `migrate`,
so their parts stay in their packages, named by the entry and checked by the test):

- `zkreader`: the znode decoder (`_znode_entities.py`, its `VERSIONS`: a format that differs by
  Kafka version is told apart there), the `ClusterSnapshot` field and `read_cluster`'s reading of
  it, and the kind's `ZkKind` in `_entities.py`;
- here: the kind's module, ending with its `EntityKind`, and its line in `KINDS`;
- `verify`: its `MetadataImage` part and replay, its expected image (`_expected.py`) and parity
  rows (`_parity.py`'s `_ROWS`), and its `snapshot` command lines (`migrate/cli/snapshot.py`);
- `tests/unit/migrate/test_kinds.py`: its rows in the hand-written tables (record types, a
  stored path, its list znodes); the test fails until every part above is there.
"""

from __future__ import annotations

from collections.abc import Mapping

from migrate.translate.acls import ACL_KIND
from migrate.translate.brokers import BROKER_KIND
from migrate.translate.configs import BROKER_CONFIG_KIND
from migrate.translate.kind import EntityKind
from migrate.translate.producer_ids import PRODUCER_IDS_KIND
from migrate.translate.quotas import CLIENT_QUOTA_KIND
from migrate.translate.tokens import DELEGATION_TOKEN_KIND
from migrate.translate.topics import PARTITION_KIND, TOPIC_CONFIG_KIND, TOPIC_KIND

__all__ = ["BY_NAME", "KINDS", "ORDER"]

KINDS: tuple[EntityKind, ...] = (
    BROKER_KIND,
    TOPIC_KIND,
    PARTITION_KIND,
    TOPIC_CONFIG_KIND,
    BROKER_CONFIG_KIND,
    CLIENT_QUOTA_KIND,
    PRODUCER_IDS_KIND,
    ACL_KIND,
    DELEGATION_TOKEN_KIND,
)
"""Every entity kind, in log order."""

BY_NAME: Mapping[str, EntityKind] = {kind.name: kind for kind in KINDS}
ORDER: Mapping[str, int] = {kind.name: i for i, kind in enumerate(KINDS)}
