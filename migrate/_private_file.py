"""Check report paths given on the command line before any work starts.

Writing them (0600, atomically) is `verify.open_private` / `verify.write_private`.
"""

from __future__ import annotations

from pathlib import Path

from migrate.errors import BadFlagError
from verify import open_private, write_private

__all__ = ["check_output_path", "open_private", "write_private"]


def check_output_path(flag: str, value: str | None) -> None:
    """Fail early (exit 2, naming the flag) if a report could not be written at `value`.

    `-` (stdout) and None (not asked for) are always fine.

    Raises:
        BadFlagError: the parent directory is missing or the path is a directory.
    """
    if value is None or value == "-":
        return
    path = Path(value)
    if path.is_dir():
        raise BadFlagError(f"{flag} {value!r}: is a directory")
    if not path.parent.is_dir():
        raise BadFlagError(f"{flag} {value!r}: directory {str(path.parent)!r} does not exist")
