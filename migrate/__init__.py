"""migrate: the CLI, translation, the Spark pipeline and the migration orchestration.

Public API only; implementation modules are `_`-prefixed.
"""

from migrate.errors import (
    BadFlagError,
    BlockersFoundError,
    MigrateError,
    SparkError,
    TranslationError,
)
from migrate.translate import TranslationOptions, TranslationResult, translate

__all__ = [
    "BadFlagError",
    "BlockersFoundError",
    "MigrateError",
    "SparkError",
    "TranslationError",
    "TranslationOptions",
    "TranslationResult",
    "translate",
]
