"""What an internal error (exit 70) leaves behind: where it was raised, and its traceback in a
file.

A bug met during a migration cannot be met again with `-v`: the run that hit it is over, and
the next one may not take the same path. So its one line on stderr names the innermost frame
(file:line in function) and the file under the temporary directory that holds the whole
traceback (chained exceptions included). Tracebacks carry code lines and exception messages,
never local values, so no secret reaches the file that the line has not already shown.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

__all__ = ["internal_error_report"]


def _raised_at(exc: BaseException) -> str:
    """The innermost frame of `exc`'s traceback, as `path:line in function` (path relative to
    the package root when it lies inside it)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "an unknown place"
    last = frames[-1]
    root = Path(__file__).resolve().parents[2]
    path = Path(last.filename)
    try:
        shown = str(path.resolve().relative_to(root))
    except ValueError:
        shown = str(path)
    return f"{shown}:{last.lineno} in {last.name}"


def _keep_traceback(exc: BaseException) -> Path | None:
    """The traceback written to a new file under the temporary directory; None if it could
    not be written (the line on stderr still says where it was raised)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    try:
        fd, name = tempfile.mkstemp(prefix=f"zk2kraft-internal-error-{stamp}-{os.getpid()}-",
                                    suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return Path(name)


def internal_error_report(exc: BaseException) -> str:
    """The line an internal error ends with (after `zk2kraft COMMAND: `)."""
    said = f"internal error: {type(exc).__name__}: {exc}, raised at {_raised_at(exc)}"
    kept = _keep_traceback(exc)
    if kept is None:
        return said + " (the traceback could not be written to a file; run with -v to print it)"
    return said + f"; the traceback is in {kept} (please report it with that file)"
