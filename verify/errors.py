"""Errors raised while replaying a log into an image and judging parity.

    VerifyError                   root
    └── ReplayError               a record does not apply to the image; names the offset (exit 2)
"""

from __future__ import annotations

__all__ = ["ReplayError", "VerifyError"]


class VerifyError(Exception):
    """Root of every error raised by `verify`."""

    exit_code: int = 2


class ReplayError(VerifyError):
    """A record does not apply to the image being built (unknown type, unknown topic id, ...)."""

    exit_code = 2
