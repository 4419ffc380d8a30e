"""verify: replay a metadata log into an image, judge parity with ZooKeeper, render reports.

Public API only; implementation modules are `_`-prefixed.
"""

from verify._render_plan import FindingLike, render_plan
from verify.errors import ReplayError, VerifyError

__all__ = ["FindingLike", "ReplayError", "VerifyError", "render_plan"]
