"""Zone-qualified ISO 8601 timestamps as inclusive millisecond bounds (QRY-TOOL-003)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final

from .errors import INVALID_FILTER, SessionQueryError

ISO_TIMESTAMP: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):(\d{2}))")
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991


@dataclass(frozen=True, slots=True)
class ExactTimestamp:
    """Whole milliseconds since the epoch plus the fraction digits beyond the third
    (trailing zeros stripped)."""

    millisecond: int
    remainder: str

    def compare(self, other: ExactTimestamp) -> int:
        if self.millisecond != other.millisecond:
            return -1 if self.millisecond < other.millisecond else 1
        width = max(len(self.remainder), len(other.remainder))
        left, right = self.remainder.ljust(width, "0"), other.remainder.ljust(width, "0")
        return (left > right) - (left < right)

    def lower_bound(self) -> float:
        return self.millisecond if not self.remainder else math.nextafter(self.millisecond,
                                                                          math.inf)

    def upper_bound(self) -> float:
        if not self.remainder:
            return self.millisecond
        return math.nextafter(float(self.millisecond + 1), -math.inf)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in_month(year: int, month: int) -> int:
    return [31, 29 if _leap(year) else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]


def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _invalid(name: str, detail: str) -> SessionQueryError:
    return SessionQueryError(INVALID_FILTER, f"session {name} filter {detail}")


def parse_timestamp(name: str, value: str) -> ExactTimestamp:
    match = ISO_TIMESTAMP.fullmatch(value)
    if match is None:
        raise _invalid(name, "must be an ISO 8601 timestamp with Z or a numeric offset")
    year, month, day, hour, minute = (int(match.group(i)) for i in range(1, 6))
    second = int(match.group(6) or 0)
    offset_hour, offset_minute = int(match.group(10) or 0), int(match.group(11) or 0)
    if (not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month) or hour > 23
            or minute > 59 or second > 59 or offset_hour > 23 or offset_minute > 59):
        raise _invalid(name, "must be a valid ISO 8601 timestamp")
    fraction = match.group(7) or ""
    millis = int(fraction[:3].ljust(3, "0"))
    offset = (offset_hour * 60 + offset_minute) * 60_000 * (-1 if match.group(9) == "-" else 1)
    epoch = (((_days_from_civil(year, month, day) * 24 + hour) * 60 + minute) * 60 + second) \
        * 1000 + millis - offset
    if abs(epoch) > 8.64e15:
        raise _invalid(name, "must be a valid ISO 8601 timestamp")
    return ExactTimestamp(epoch, fraction[3:].rstrip("0"))


def timestamp_range(name: str, start: str | None, end: str | None
                    ) -> dict[str, float] | None:
    """``{from?, to?}`` for a pair of optional timestamps, or ``None`` when both are absent."""
    if start is None and end is None:
        return None
    low = parse_timestamp(f"{name}_from", start) if start is not None else None
    high = parse_timestamp(f"{name}_to", end) if end is not None else None
    if low is not None and high is not None and low.compare(high) > 0:
        raise _invalid(name, "from must be less than or equal to to")
    out: dict[str, float] = {}
    if low is not None:
        out["from"] = low.lower_bound()
    if high is not None:
        out["to"] = high.upper_bound()
    return out


def iso(ms: float) -> str:
    """``new Date(ms).toISOString()``."""
    whole = math.floor(ms)
    days, rest = divmod(whole, 86_400_000)
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    hour, rest = divmod(rest, 3_600_000)
    minute, rest = divmod(rest, 60_000)
    second, milli = divmod(rest, 1000)
    shown = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    return f"{shown}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{milli:03d}Z"
