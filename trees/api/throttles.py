"""API requests counted per person (every token and the session together) and per address, in
the cache every web process shares (settings.CACHES: Redis with a broker, else the database's
table), so that neither more tokens nor more gunicorn workers buy more requests."""

from __future__ import annotations

import logging
import math
from typing import Any

import redis
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

logger = logging.getLogger(__name__)


class SharedRateThrottle(SimpleRateThrottle):
    """At most the scope's rate in each whole period (a minute of `600/min`), counted with an
    atomic increment (Redis INCR), where DRF's own throttle reads a list of times and writes
    it back, losing the counts of requests that other processes made in between. A window
    ends for everyone at once, so a client may send up to twice the rate across its edge."""

    num_requests: int  # DRF's parse_rate sets both from the scope's rate
    duration: int
    now: float
    window_ends: float

    def who(self, request: Request) -> str | None:
        """What the count is of; None: not counted here."""
        raise NotImplementedError

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        who = self.who(request)
        return None if who is None else self.cache_format % {"scope": self.scope, "ident": who}

    def allow_request(self, request: Request, view: Any) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        self.now = float(self.timer())
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        counter = f"{key}:{window}"
        try:
            self.cache.add(counter, 0, timeout=self.duration + 1)
            try:
                count = self.cache.incr(counter)
            except ValueError:  # the counter expired between the two calls
                self.cache.add(counter, 1, timeout=self.duration + 1)
                count = 1
        except redis.RedisError as error:
            # Redis restarting: the API goes on unthrottled rather than failing every request.
            logger.warning("API throttle not counted, the cache failed: %s", error)
            return True
        return bool(count <= self.num_requests)

    def wait(self) -> float | None:
        return max(1.0, math.ceil(self.window_ends - self.now))


class PersonRateThrottle(SharedRateThrottle):
    """API_THROTTLE_RATE per person, whichever of their tokens or their session sends it."""

    scope = "api"

    def who(self, request: Request) -> str | None:
        if request.user and request.user.is_authenticated:
            return f"user-{request.user.pk}"
        return None  # the address's count is the only one for anonymous requests


class AddressRateThrottle(SharedRateThrottle):
    """API_THROTTLE_ADDRESS_RATE per address, every person's requests from it together (the
    client's, behind TRUSTED_PROXIES proxies; the peer's otherwise)."""

    scope = "api-address"

    def who(self, request: Request) -> str | None:
        return f"address-{self.get_ident(request)}"
