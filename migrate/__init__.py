"""migrate: the CLI, translation, the Spark pipeline and the migration orchestration.

Public API only; implementation modules are `_`-prefixed.
"""

from migrate.bulk.pipeline import EncodedLog, compare_spark, encode_log, plan_batches
from migrate.bulk.run import BulkOptions, BulkOutcome, run_bulk
from migrate.bulk.spark import SparkRuntime
from migrate.bulk.spark_start import SparkStarter
from migrate.bulk.voters import VoterTarget, check_voters
from migrate.errors import (
    BadFlagError,
    BlockersFoundError,
    MigrateError,
    SparkError,
    TranslationError,
)
from migrate.translate.delta import delta_records
from migrate.translate.entities import (
    EntityDelta,
    EntityKey,
    bulk_entity_keys,
    entity_key_for_path,
    entity_records,
    resync_keys,
)
from migrate.translate.framing import TranslationOptions, closing_records, opening_records
from migrate.translate.translation import TranslationResult, translate

__all__ = [
    "EntityDelta",
    "EntityKey",
    "bulk_entity_keys",
    "closing_records",
    "delta_records",
    "entity_key_for_path",
    "entity_records",
    "opening_records",
    "resync_keys",
    "BadFlagError",
    "BlockersFoundError",
    "BulkOptions",
    "BulkOutcome",
    "EncodedLog",
    "MigrateError",
    "SparkError",
    "SparkRuntime",
    "SparkStarter",
    "TranslationError",
    "TranslationOptions",
    "TranslationResult",
    "VoterTarget",
    "check_voters",
    "compare_spark",
    "encode_log",
    "plan_batches",
    "run_bulk",
    "translate",
]
