"""The time a check is judged at: a timezone-aware datetime, seconds since the epoch, or now."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Optional, Union

#: When to judge a check: a datetime (naive ones are taken as UTC) or seconds since the epoch.
Instant = Union[datetime, float, int]


def epoch_seconds(now: Optional[Instant]) -> float:
    if now is None:
        return time.time()
    if isinstance(now, datetime):
        aware = now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
        return aware.timestamp()
    return float(now)
