"""Times as the schedulers store them (time_t, epoch seconds) and as the database does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def epoch_seconds(moment: datetime | None) -> int:
    """A time as PBS stores it (time_t); no time is 0."""
    return 0 if moment is None else int(moment.timestamp())


def epoch_time(seconds: int) -> datetime:
    """An epoch time as an aware UTC datetime."""
    return datetime.fromtimestamp(seconds, tz=UTC)


def epoch_microseconds(moment: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch, exactly."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def epoch_microseconds_time(microseconds: int) -> datetime:
    """Microseconds since the epoch as an aware UTC datetime, exactly."""
    return EPOCH + timedelta(microseconds=microseconds)


def from_epoch_seconds(seconds: int) -> datetime | None:
    """A time PBS stores, time_t, as a datetime; 0 (no time) as None."""
    return None if seconds == 0 else epoch_time(seconds)
