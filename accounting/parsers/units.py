"""Sizes and durations as PBS, Torque and Slurm write them."""

from __future__ import annotations

import math
import re

# PBS units are powers of 1024 of bytes (b) or words (w, 8 bytes); Slurm writes K/M/G/T/P.
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([kmgtpe]?)([bw]?)", re.IGNORECASE | re.ASCII)
_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
_DURATION = re.compile(r"(?:(\d+)-)?(?:(?:(\d+):)?(\d+):)?(\d+(?:\.\d*)?)", re.ASCII)


def parse_size(text: str, *, default_unit: str = "b") -> int:
    """Bytes in a PBS size (`10gb`, `246415360kb`, `2w`) or a Slurm one (`62.50G`, `12.27M`).

    A bare number is in `default_unit` (PBS: bytes; Slurm memory: `M`). Raises ValueError.
    """
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a size: {text!r}")
    number, power, kind = (str(group) for group in match.groups())
    if not power and not kind:
        return parse_size(number + default_unit)
    scale: int = 1 << (10 * _POWER[power.lower()])
    scale *= 8 if kind.lower() == "w" else 1
    if "." in number:
        value = float(number) * scale
        if not math.isfinite(value):
            raise ValueError(f"size out of range: {text!r}")
        return round(value)
    return int(number) * scale


def parse_duration(text: str) -> int:
    """Seconds in `[[H+:]MM:]SS` (hours unbounded, `1280:19:30`), `[D-]HH:MM:SS` or `SS`.

    Fractional seconds are rounded. Raises ValueError.
    """
    match = _DURATION.fullmatch(text.strip())
    if match is None or (match.group(1) is not None and match.group(3) is None):
        raise ValueError(f"not a duration: {text!r}")
    days, hours, minutes, seconds = match.groups()
    total = float(seconds) + 60 * int(minutes or 0) + 3600 * int(hours or 0)
    total += 86400 * int(days or 0)
    if not math.isfinite(total):
        raise ValueError(f"duration out of range: {text!r}")
    return round(total)


def format_duration(seconds: int) -> str:
    """`H:MM:SS` with unbounded hours, as PBS writes walltime."""
    hours, rest = divmod(seconds, 3600)
    return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
