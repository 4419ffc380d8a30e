"""migrate: the CLI, translation, the Spark pipeline and the migration orchestration.

This module exports the package's public API. The implementation sits in plainly named
sub-packages (`bulk/`, `cli/`, `flags/`, `fleet/`, `online/`, `preflight/`, `translate/`); directly
under `migrate/` are the public `errors.py` and the private `_private_file.py` and `_progress.py`.
Other packages import it only through this module, a public module directly under it
(`migrate.errors`) or a sub-package's `__init__`; never a `_`-prefixed module or a module inside a
sub-package (docs/design/overview.md; tests/unit/test_layering.py checks it).
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
