"""How long to wait before trying the API server again."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass
class Backoff:
    """Capped exponential backoff with full jitter (AWS architecture blog's variant)."""

    base: float = 0.5
    cap: float = 30.0
    attempt: int = 0

    def next_delay(self, retry_after: float | None = None) -> float:
        # The exponent is capped: 2.0 ** 1024 overflows, after hours of retries.
        delay = random.uniform(0, min(self.cap, self.base * 2.0 ** min(self.attempt, 32)))
        self.attempt += 1
        return max(delay, retry_after or 0.0)

    def reset(self) -> None:
        self.attempt = 0
