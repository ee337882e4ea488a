"""SQL values stored the same way in row images and JSON opaques: binary DECIMAL
(``strings/decimal.cc`` bin2decimal) and the packed temporal formats
(``mysys/my_time.cc``).  Shared by :mod:`repltool.binlog.rows` and
:mod:`repltool.binlog.jsonb`; imports neither.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

__all__ = ["BadValue", "EPOCH", "datetime_from_packed", "datetime2_fields",
           "decimal_digits", "decimal_from_groups", "decimal_plan", "decimal_size",
           "decode_decimal", "format_time", "frac_text", "make_date", "make_datetime",
           "time_from_packed", "timestamp2_fields"]


class BadValue(ValueError):
    """A value's bytes are impossible for its column type (row decoding turns it
    into :class:`~repltool.errors.MalformedEvent`; JSON decoding into ``JsonError``)."""


# ---- DECIMAL (strings/decimal.cc bin2decimal) ----

_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_size(precision: int, scale: int) -> int:
    """decimal_bin_size(precision, scale): bytes of a binary DECIMAL."""
    intg = precision - scale
    return (intg // 9) * 4 + _DIG2BYTES[intg % 9] + (scale // 9) * 4 + _DIG2BYTES[scale % 9]


def decimal_plan(precision: int, scale: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """The digit groups of a binary DECIMAL(precision, scale): ((bytes, digits) per
    group, number of integer groups), as bin2decimal reads them."""
    intg = precision - scale
    ig, ix = divmod(intg, 9)
    fg, fx = divmod(scale, 9)
    groups = ([(_DIG2BYTES[ix], ix)] if ix else []) + [(4, 9)] * ig
    n_int = len(groups)
    groups += [(4, 9)] * fg + ([(_DIG2BYTES[fx], fx)] if fx else [])
    return tuple(groups), n_int


def decode_decimal(raw: bytes, precision: int, scale: int) -> Decimal:
    """A binary DECIMAL(precision, scale) -> Decimal (``raw`` exactly decimal_size bytes).

    Groups of 9 digits are 4-byte big-endian integers, the partial leading and
    trailing groups take dig2bytes[digits] bytes; negative values have every
    byte inverted; the first byte's top bit is flipped (memcmp order).

    Example::

        >>> decode_decimal(bytes.fromhex('80fa00'), 5, 2)
        Decimal('250.00')
        >>> decode_decimal(bytes.fromhex('7f05ff'), 5, 2)
        Decimal('-250.00')
    """
    if precision == 0 or scale > precision:
        raise BadValue(f"DECIMAL({precision},{scale}) is not a valid type")
    size = decimal_size(precision, scale)
    if len(raw) != size:
        raise BadValue(f"DECIMAL({precision},{scale}) needs {size} bytes, got {len(raw)}")
    groups, n_int = decimal_plan(precision, scale)
    return decimal_from_groups(raw, size, groups, n_int)


def decimal_from_groups(raw: bytes, size: int, groups: tuple[tuple[int, int], ...],
                        n_int: int) -> Decimal:
    """:func:`decode_decimal` with the size and :func:`decimal_plan` computed
    beforehand (once per column, by the row decoders)."""
    negative, ip, fp = decimal_digits(raw, size, groups, n_int)
    return Decimal(("-" if negative else "") + (ip or "0") + ("." + fp if fp else ""))


def decimal_digits(raw: bytes, size: int, groups: tuple[tuple[int, int], ...],
                   n_int: int) -> tuple[bool, str, str]:
    """bin2decimal's reading of a binary DECIMAL's ``size`` bytes: (negative, the
    integer digits with their leading zeros, the fraction digits).

    :raises BadValue: for a digit group beyond its number of digits.
    """
    v = int.from_bytes(raw, "big") ^ (0x80 << (8 * (size - 1)))
    negative = not raw[0] & 0x80
    if negative:
        v ^= (1 << (8 * size)) - 1
    b = v.to_bytes(size, "big")
    parts = []
    p = 0
    for nbytes, ndigits in groups:
        g = int.from_bytes(b[p:p + nbytes], "big")
        p += nbytes
        if g >= _POW10[ndigits]:
            raise BadValue(f"DECIMAL group {g} has more than {ndigits} digits")
        parts.append(str(g).zfill(ndigits))
    return negative, "".join(parts[:n_int]), "".join(parts[n_int:])


def datetime2_fields(d: bytes, p: int, fb: int, mul: int
                     ) -> tuple[int, int, int, int, int, int, int]:
    """A DATETIME2 at ``p`` (5 bytes, then ``fb`` fraction bytes worth ``mul``
    microseconds each; the caller checked they are there): year, month, day, hour,
    minute, second, microseconds (my_datetime_packed_from_binary).

    :raises BadValue: for a negative value or a fraction beyond 999999.
    """
    intpart = int.from_bytes(d[p:p + 5], "big") - 0x8000000000
    if intpart < 0:
        raise BadValue("negative DATETIME2 value")
    us = int.from_bytes(d[p + 5:p + 5 + fb], "big") * mul if fb else 0
    if us > 999999:
        raise BadValue(f"fractional seconds {us} out of range")
    ymd, hms = intpart >> 17, intpart & 0x1FFFF
    ym = ymd >> 5
    return ym // 13, ym % 13, ymd & 31, hms >> 12, (hms >> 6) & 63, hms & 63, us


def date_fields(d: bytes, p: int) -> tuple[int, int, int]:
    """A DATE at ``p`` (3 bytes, little-endian; the caller checked they are there):
    year, month, day (``year << 9 | month << 5 | day``, Field_newdate)."""
    v = d[p] | d[p + 1] << 8 | d[p + 2] << 16
    return v >> 9, (v >> 5) & 15, v & 31


def timestamp2_fields(d: bytes, p: int, fb: int, mul: int) -> tuple[int, int]:
    """A TIMESTAMP2 at ``p`` (4 bytes, then ``fb`` fraction bytes; the caller checked
    they are there): (seconds since the epoch, microseconds) (my_timestamp_from_binary).

    :raises BadValue: for a fraction beyond 999999.
    """
    secs = int.from_bytes(d[p:p + 4], "big")
    us = int.from_bytes(d[p + 4:p + 4 + fb], "big") * mul if fb else 0
    if us > 999999:
        raise BadValue(f"fractional seconds {us} out of range")
    return secs, us


_POW10 = tuple(10 ** i for i in range(10))


# ---- temporal (mysys/my_time.cc) ----

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)   #: TIMESTAMP zero


def frac_text(us: int, fsp: int) -> str:
    """The ``.ffffff`` fraction MySQL prints for ``fsp`` digits ('' for 0)."""
    return f".{us:06d}"[:fsp + 1] if fsp else ""


def make_datetime(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int,
                  fsp: int = 6) -> datetime | str:
    """A naive datetime, or MySQL text for values Python cannot hold (zero dates)."""
    try:
        return datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}" + frac_text(us, fsp)


def make_date(y: int, mo: int, d: int) -> date | str:
    try:
        return date(y, mo, d)
    except ValueError:
        return f"{y:04d}-{mo:02d}-{d:02d}"


def datetime_from_packed(packed: int, fsp: int = 6) -> datetime | str:
    """TIME_from_longlong_datetime_packed (JSON opaque DATETIME/TIMESTAMP/DATE)."""
    if packed < 0:
        packed = -packed
    us = packed % (1 << 24)
    ymdhms = packed >> 24
    ymd, hms = ymdhms >> 17, ymdhms % (1 << 17)
    ym = ymd >> 5
    if us > 999999:
        raise BadValue(f"fractional seconds {us} out of range")
    return make_datetime(ym // 13, ym % 13, ymd % 32, hms >> 12, (hms >> 6) % 64, hms % 64,
                         us, fsp)


def time_from_packed(packed: int) -> timedelta:
    """TIME_from_longlong_time_packed: signed (hms << 24) + microseconds."""
    neg = packed < 0
    if neg:
        packed = -packed
    us = packed % (1 << 24)
    hms = packed >> 24
    if us > 999999:
        raise BadValue(f"fractional seconds {us} out of range")
    secs = ((hms >> 12) % (1 << 10)) * 3600 + ((hms >> 6) % 64) * 60 + hms % 64
    td = timedelta(seconds=secs, microseconds=us)
    return -td if neg else td


def format_time(td: timedelta, fsp: int) -> str:
    """MySQL TIME text for a timedelta: ``-838:59:59.000000``."""
    neg = td < timedelta(0)
    if neg:
        td = -td
    total = td.days * 86400 + td.seconds
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{'-' if neg else ''}{h:02d}:{m:02d}:{s:02d}" + frac_text(td.microseconds, fsp)
