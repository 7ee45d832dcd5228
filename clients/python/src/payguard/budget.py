"""The guard's daily budget: today's spend in micro-dollars (every approved amount, reserved before signing and
never given back once signing may have happened), reset only when the UTC day advances on the injected clock.
Decisions run one at a time under one asyncio.Lock: one guard per event loop and budget."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable


def utc_day(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError("the clock must return timezone-aware datetimes")
    return t.astimezone(timezone.utc).date().isoformat()


@dataclass
class Reservation:
    day: str
    micros: int


class Budget:
    def __init__(self, now: Callable[[], datetime] | None = None):
        self.now = now or (lambda: datetime.now(timezone.utc))
        self.day = utc_day(self.now())
        self.spent = 0
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def lock(self) -> asyncio.Lock:
        """The decision lock, bound to the event loop that uses this budget (a closed loop hands it on)."""
        loop = asyncio.get_running_loop()
        if self._loop is None or self._loop.is_closed():
            self._loop, self._lock = loop, asyncio.Lock()
        elif self._loop is not loop:
            raise RuntimeError("payguard: a guard serves one event loop; make one guard per loop and budget")
        assert self._lock is not None
        return self._lock

    def rollover(self) -> str:
        """Start a new budget when the UTC day has advanced (a clock that goes back keeps the day)."""
        today = utc_day(self.now())
        if today > self.day:
            self.day, self.spent = today, 0
        return self.day

    def spent_today(self) -> int:
        self.rollover()
        return self.spent

    def reserve(self, micros: int) -> Reservation:
        self.spent += micros
        return Reservation(self.day, micros)

    def release(self, r: Reservation) -> None:
        """Give back a reservation that never reached signing (a hold a person refused)."""
        if r.day == self.day:
            self.spent -= r.micros
