"""ClaimDesk's judge library: pure Python, no Django. See DESIGN.md, "Judges"."""

from judges.engine import JudgeConfig, JudgeError, JudgeIdentity, JudgeOutput, identify, judge
from judges.types import FLAGGED_LABELS, LABELS, JudgeRequest, JudgeResult

__all__ = [
    "FLAGGED_LABELS",
    "LABELS",
    "JudgeConfig",
    "JudgeError",
    "JudgeIdentity",
    "JudgeOutput",
    "JudgeRequest",
    "JudgeResult",
    "identify",
    "judge",
]
