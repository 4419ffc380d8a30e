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

__all__ = [
    "BadFlagError",
    "BlockersFoundError",
    "MigrateError",
    "SparkError",
    "TranslationError",
]
