"""The time a check is judged at: a timezone-aware datetime, seconds since the epoch, or now."""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Optional, Union

#: When to judge a check: a datetime (naive ones are taken as UTC) or seconds since the epoch.
Instant = Union[datetime, float, int]


#: The largest clock tolerance accepted: beyond an hour it is a wrong clock, not skew.
MAX_CLOCK_TOLERANCE_SECONDS = 3600


def epoch_seconds(now: Optional[Instant]) -> float:
    """``now`` in seconds since the epoch. A value that is not a finite time raises ValueError: a
    check that compared against NaN would accept every token, however expired."""
    if now is None:
        return time.time()
    if isinstance(now, datetime):
        aware = now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
        return aware.timestamp()
    if isinstance(now, bool) or not isinstance(now, (int, float)) or not math.isfinite(now):
        raise ValueError("now must be a datetime or a finite number of seconds since the epoch")
    return float(now)


def tolerance_seconds(seconds: float, name: str) -> float:
    """A clock tolerance from 0 to an hour; anything else raises ValueError."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds <= MAX_CLOCK_TOLERANCE_SECONDS:
        raise ValueError(f"{name} must be a number of seconds from 0 to {MAX_CLOCK_TOLERANCE_SECONDS}")
    return float(seconds)
