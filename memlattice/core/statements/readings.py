"""Readings: a number with the unit it is measured in ("87%", "41 GB", "p95 240ms").

A reading is a measurement, which varies from one to the next ("cache hit rate
87%", then "64%"), not a setting; the contrast reading
(memlattice.core.statements.contrast) takes one as a new value only where a change
leads to it ("raised the cap to 80%"), and only in place of a reading of the same
measure: a share in percent and a timeout in seconds are not values of one setting
("timeouts at 0.2%", then "raised the timeout to 5s"), whatever words the two
memories share, while milliseconds and seconds are. Pure: no I/O.
"""

from __future__ import annotations

import re

# Units written apart from their number ("41 GB", "87 percent").
_UNITS = frozenset({"%", "percent", "ms", "s", "sec", "secs", "gb", "mb", "kb", "tb",
                    "gib", "mib", "kib", "tib", "rps", "qps", "rpm", "°c", "kg", "lbs"})
# A number with its unit in one word ("240ms", "0.2%", "212d").
_MEASURED = re.compile(r"^\d[\d.,]*(%|ms|s|min|h|d|w|gb|mb|kb|tb|gib|mib|k|m|rps|qps)$")
# What each unit measures (physical dimensions; "k" and "m" scale a count).
_DIMENSIONS = {"%": "share", "percent": "share", "ms": "duration", "s": "duration",
               "sec": "duration", "secs": "duration", "min": "duration", "h": "duration",
               "d": "duration", "w": "duration", "gb": "size", "mb": "size", "kb": "size",
               "tb": "size", "gib": "size", "mib": "size", "kib": "size", "tib": "size",
               "rps": "rate", "qps": "rate", "rpm": "rate", "°c": "temperature",
               "kg": "weight", "lbs": "weight", "k": "magnitude", "m": "magnitude"}
_NUMBER_PART = re.compile(r"^[\d.,]+")


def reading_of(word: str, following: str) -> str | None:
    """`word` (lower case, holding a digit) as a reading, its unit attached ("41gb"
    for "41 GB"), when it is one; `following` is the next word."""
    if _MEASURED.match(word):
        return word.strip(".,")
    if following in _UNITS:
        return word.strip(".,") + following
    return None


def dimension(reading: str) -> str:
    """What a reading (`reading_of`'s form) measures, else its unit as written."""
    unit = _NUMBER_PART.sub("", reading)
    return _DIMENSIONS.get(unit, unit)
