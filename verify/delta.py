"""Deltas: mutable accumulators that replay metadata records on top of an image.

Shaped like Kafka's `MetadataDelta`: `MetadataDelta.replay(record)` looks the record's type up in
ONE router table (`_ROUTES`) and hands the record to the sub-delta that owns it, created on first
use; an unknown type raises `UnknownRecordTypeError` (nothing is skipped), `NO_OP_RECORD` is an
explicit no-op, and `REMOVE_TOPIC_RECORD`, which touches two entities, is split by the router
(topics, then that topic's configs) so sub-deltas stay independent. `apply()` returns the next
image and reuses every untouched sub-image; `finish_snapshot()` deletes whatever a snapshot did
not mention.

Transaction markers (Begin/End/AbortTransactionRecord) belong to the loader (`verify._loader`),
which knows batches and offsets; given to a delta they raise.

Records are `writers.MetadataRecord`s: Kafka's camelCase JSON field names, Uuids as 22-char text.
A field left out takes the schema default, as the codec would decode it.

This module is the router and the public face; the sub-deltas live in `verify._delta_cluster`
(features, brokers, controllers), `verify._delta_topics` and `verify._delta_entities` (configs,
quotas, SCRAM, ACLs, tokens), over what they share in `verify._delta_base`; import them from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from verify._delta_base import Data
from verify._delta_cluster import ClusterDelta, FeaturesDelta
from verify._delta_entities import (
    AclsDelta,
    ClientQuotasDelta,
    ConfigsDelta,
    DelegationTokensDelta,
    ScramDelta,
)
from verify._delta_topics import TopicDelta, TopicsDelta
from verify.errors import ReplayError, UnknownRecordTypeError
from verify.image import MetadataImage, ProducerIdsImage
from writers import TOPIC_RESOURCE, MetadataRecord

__all__ = [
    "RECORD_TYPES",
    "TRANSACTION_RECORD_TYPES",
    "AclsDelta",
    "ClientQuotasDelta",
    "ClusterDelta",
    "ConfigsDelta",
    "DelegationTokensDelta",
    "FeaturesDelta",
    "MetadataDelta",
    "ScramDelta",
    "TopicDelta",
    "TopicsDelta",
    "apply_records",
]



# ------------------------------------------------------------------------------ the router


class MetadataDelta:
    """Replays metadata records on top of a `MetadataImage`; `apply()` gives the next image.

    Asking is not creating (Kafka's `MetadataDelta`): `topics_delta()` and the other
    `*_delta()` getters return None when no record touched that kind, so a caller can ask "was
    this touched?"; replay goes through `get_or_create_*_delta()`.

    Args:
        base: the image the records apply to (`MetadataImage.EMPTY` for a fresh log).
    """

    def __init__(self, base: MetadataImage | None = None) -> None:
        self.base = base if base is not None else MetadataImage.EMPTY
        self._features: FeaturesDelta | None = None
        self._cluster: ClusterDelta | None = None
        self._topics: TopicsDelta | None = None
        self._configs: ConfigsDelta | None = None
        self._quotas: ClientQuotasDelta | None = None
        self._scram: ScramDelta | None = None
        self._acls: AclsDelta | None = None
        self._producer_ids: ProducerIdsImage | None = None
        self._tokens: DelegationTokensDelta | None = None
        self._zk_migration_state: int | None = None
        self.records_replayed = 0

    # -- asking (never creates) -----------------------------------------------------------
    def features_delta(self) -> FeaturesDelta | None:
        """The features sub-delta, None if no record touched features."""
        return self._features

    def cluster_delta(self) -> ClusterDelta | None:
        """The broker/controller registrations sub-delta, None if untouched."""
        return self._cluster

    def topics_delta(self) -> TopicsDelta | None:
        """The topics sub-delta, None if untouched."""
        return self._topics

    def configs_delta(self) -> ConfigsDelta | None:
        """The configs sub-delta, None if untouched."""
        return self._configs

    def client_quotas_delta(self) -> ClientQuotasDelta | None:
        """The client quotas sub-delta, None if untouched."""
        return self._quotas

    def scram_delta(self) -> ScramDelta | None:
        """The SCRAM sub-delta, None if untouched."""
        return self._scram

    def acls_delta(self) -> AclsDelta | None:
        """The ACLs sub-delta, None if untouched."""
        return self._acls

    def delegation_tokens_delta(self) -> DelegationTokensDelta | None:
        """The delegation tokens sub-delta, None if untouched."""
        return self._tokens

    def producer_ids(self) -> ProducerIdsImage | None:
        """The producer-ids image a `ProducerIdsRecord` here set, None if none did."""
        return self._producer_ids

    def zk_migration_state(self) -> int | None:
        """The `ZkMigrationStateRecord` value replayed here, None if none was."""
        return self._zk_migration_state

    # -- creating (replay) ----------------------------------------------------------------
    def get_or_create_features_delta(self) -> FeaturesDelta:
        """The features sub-delta, created on first use."""
        if self._features is None:
            self._features = FeaturesDelta(self.base.features)
        return self._features

    def get_or_create_cluster_delta(self) -> ClusterDelta:
        """The registrations sub-delta, created on first use."""
        if self._cluster is None:
            self._cluster = ClusterDelta(self.base.cluster)
        return self._cluster

    def get_or_create_topics_delta(self) -> TopicsDelta:
        """The topics sub-delta, created on first use."""
        if self._topics is None:
            self._topics = TopicsDelta(self.base.topics)
        return self._topics

    def get_or_create_configs_delta(self) -> ConfigsDelta:
        """The configs sub-delta, created on first use."""
        if self._configs is None:
            self._configs = ConfigsDelta(self.base.configs)
        return self._configs

    def get_or_create_client_quotas_delta(self) -> ClientQuotasDelta:
        """The client quotas sub-delta, created on first use."""
        if self._quotas is None:
            self._quotas = ClientQuotasDelta(self.base.client_quotas)
        return self._quotas

    def get_or_create_scram_delta(self) -> ScramDelta:
        """The SCRAM sub-delta, created on first use."""
        if self._scram is None:
            self._scram = ScramDelta(self.base.scram)
        return self._scram

    def get_or_create_acls_delta(self) -> AclsDelta:
        """The ACLs sub-delta, created on first use."""
        if self._acls is None:
            self._acls = AclsDelta(self.base.acls)
        return self._acls

    def get_or_create_delegation_tokens_delta(self) -> DelegationTokensDelta:
        """The delegation tokens sub-delta, created on first use."""
        if self._tokens is None:
            self._tokens = DelegationTokensDelta(self.base.delegation_tokens)
        return self._tokens

    def replay(self, record: MetadataRecord) -> None:
        """Replay one metadata record.

        Raises:
            UnknownRecordTypeError: no handler for the record's type.
            ReplayError: the record does not apply (unknown topic id, missing field, ...), naming
                the record type; the loader adds the offset.
        """
        handler = _ROUTES.get(record.type)
        if handler is None:
            raise UnknownRecordTypeError("unknown metadata record type", record_type=record.type)
        try:
            handler(self, record)
        except ReplayError as exc:
            raise type(exc)(exc.problem, record_type=record.type, offset=exc.offset) from None
        except KeyError as exc:
            raise ReplayError(f"missing field {exc}", record_type=record.type) from None
        except (TypeError, ValueError) as exc:
            raise ReplayError(f"malformed field: {exc}", record_type=record.type) from None
        self.records_replayed += 1

    def finish_snapshot(self) -> None:
        """Mark everything a snapshot did not mention as deleted (call after replaying it)."""
        self.get_or_create_features_delta().finish_snapshot()
        self.get_or_create_cluster_delta().finish_snapshot()
        self.get_or_create_topics_delta().finish_snapshot()
        self.get_or_create_configs_delta().finish_snapshot()
        self.get_or_create_client_quotas_delta().finish_snapshot()
        self.get_or_create_scram_delta().finish_snapshot()
        self.get_or_create_acls_delta().finish_snapshot()
        self.get_or_create_delegation_tokens_delta().finish_snapshot()
        if self._producer_ids is None:
            self._producer_ids = ProducerIdsImage.EMPTY
        if self._zk_migration_state is None:
            self._zk_migration_state = 0

    def apply(self) -> MetadataImage:
        """The image after every replayed record; untouched sub-images are reused."""
        b = self.base
        return MetadataImage(
            features=self._features.apply() if self._features else b.features,
            cluster=self._cluster.apply() if self._cluster else b.cluster,
            topics=self._topics.apply() if self._topics else b.topics,
            configs=self._configs.apply() if self._configs else b.configs,
            client_quotas=self._quotas.apply() if self._quotas else b.client_quotas,
            scram=self._scram.apply() if self._scram else b.scram,
            acls=self._acls.apply() if self._acls else b.acls,
            producer_ids=self._producer_ids if self._producer_ids else b.producer_ids,
            delegation_tokens=self._tokens.apply() if self._tokens else b.delegation_tokens,
            zk_migration_state=b.zk_migration_state
            if self._zk_migration_state is None
            else self._zk_migration_state,
        )

    # handlers (one per record type; see _ROUTES)
    def _fence(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(int(d["id"]), int(d["epoch"]), fenced=1)

    def _unfence(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(int(d["id"]), int(d["epoch"]),
                                                         fenced=-1)

    def _registration_change(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self.get_or_create_cluster_delta().replay_change(
            int(d["brokerId"]), int(d["brokerEpoch"]), fenced=int(d.get("fenced", 0)),
            controlled_shutdown=int(d.get("inControlledShutdown", 0)),
            log_dirs=list(d.get("logDirs") or ()),
        )

    def _remove_topic(self, r: MetadataRecord) -> None:
        name = self.get_or_create_topics_delta().replay_remove(r.data)
        self.get_or_create_configs_delta().delete_resource((TOPIC_RESOURCE, name))

    def _producer_ids_record(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self._producer_ids = ProducerIdsImage(
            int(d["nextProducerId"]), int(d.get("brokerId", -1)), int(d.get("brokerEpoch", -1))
        )

    def _zk_migration(self, r: MetadataRecord) -> None:
        d: Data = r.data
        self._zk_migration_state = int(d["zkMigrationState"])

    def _no_op(self, r: MetadataRecord) -> None:
        """`NoOpRecord`: nothing to apply, by design (it only advances the offset)."""

    def _transaction_marker(self, r: MetadataRecord) -> None:
        raise ReplayError("transaction markers are handled by the loader, not replayed")


def apply_records(image: MetadataImage, records: Iterable[MetadataRecord]) -> MetadataImage:
    """Replay a batch of metadata records onto `image` and return the next image.

    What the online mirror uses to keep "what the log holds" current after each append.
    Transaction markers are not metadata (the loader handles them) and raise here; pass only
    the metadata records of what was appended.

    Raises:
        UnknownRecordTypeError, ReplayError: as `MetadataDelta.replay`.
    """
    delta = MetadataDelta(image)
    for record in records:
        delta.replay(record)
    return delta.apply()


_Handler = Callable[[MetadataDelta, MetadataRecord], None]

def _cluster(d: MetadataDelta) -> ClusterDelta:
    return d.get_or_create_cluster_delta()


def _topics(d: MetadataDelta) -> TopicsDelta:
    return d.get_or_create_topics_delta()


def _scram(d: MetadataDelta) -> ScramDelta:
    return d.get_or_create_scram_delta()


def _acls(d: MetadataDelta) -> AclsDelta:
    return d.get_or_create_acls_delta()


def _tokens(d: MetadataDelta) -> DelegationTokensDelta:
    return d.get_or_create_delegation_tokens_delta()


_ROUTES: dict[str, _Handler] = {
    "REGISTER_BROKER_RECORD": lambda d, r: _cluster(d).replay_register(r.data),
    "UNREGISTER_BROKER_RECORD": lambda d, r: _cluster(d).replay_unregister(r.data),
    "TOPIC_RECORD": lambda d, r: _topics(d).replay_topic(r.data),
    "PARTITION_RECORD": lambda d, r: _topics(d).replay_partition(r.data, r.version),
    "CONFIG_RECORD": lambda d, r: d.get_or_create_configs_delta().replay(r.data),
    "PARTITION_CHANGE_RECORD": lambda d, r: _topics(d).replay_partition_change(r.data),
    "FENCE_BROKER_RECORD": MetadataDelta._fence,
    "UNFENCE_BROKER_RECORD": MetadataDelta._unfence,
    "REMOVE_TOPIC_RECORD": MetadataDelta._remove_topic,
    "DELEGATION_TOKEN_RECORD": lambda d, r: _tokens(d).replay(r.data),
    "USER_SCRAM_CREDENTIAL_RECORD": lambda d, r: _scram(d).replay(r.data),
    "FEATURE_LEVEL_RECORD": lambda d, r: d.get_or_create_features_delta().replay(r.data),
    "CLIENT_QUOTA_RECORD": lambda d, r: d.get_or_create_client_quotas_delta().replay(r.data),
    "PRODUCER_IDS_RECORD": MetadataDelta._producer_ids_record,
    "BROKER_REGISTRATION_CHANGE_RECORD": MetadataDelta._registration_change,
    "ACCESS_CONTROL_ENTRY_RECORD": lambda d, r: _acls(d).replay(r.data),
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD": lambda d, r: _acls(d).replay_remove(r.data),
    "NO_OP_RECORD": MetadataDelta._no_op,
    "ZK_MIGRATION_STATE_RECORD": MetadataDelta._zk_migration,
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": lambda d, r: _scram(d).replay_remove(r.data),
    "BEGIN_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "END_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "ABORT_TRANSACTION_RECORD": MetadataDelta._transaction_marker,
    "REMOVE_DELEGATION_TOKEN_RECORD": lambda d, r: _tokens(d).replay_remove(r.data),
    "REGISTER_CONTROLLER_RECORD": lambda d, r: _cluster(d).replay_register_controller(r.data),
}

RECORD_TYPES: frozenset[str] = frozenset(_ROUTES)
"""Every metadata record type replay understands."""

TRANSACTION_RECORD_TYPES: frozenset[str] = frozenset(
    {"BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD"}
)
"""Markers the loader consumes itself."""
