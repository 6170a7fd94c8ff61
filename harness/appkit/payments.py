"""Payment-domain helpers of the app suites: money strings, local days, signed webhooks.

The payments scenarios (a ledger synced from a vendor) grade the same three things:
an amount in minor units shown as the exact decimal string of its currency's exponent
(``money``: no float ever, amounts above 2**53 included), the calendar day and minute
of a UTC timestamp in the business's time zone (``local_day``, ``local_minute``: a
DST change moves the day boundary), and the vendor's webhook signature
(``sign_v1``: ``v1=`` HMAC-SHA256 hex over ``timestamp.body``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from harness.appkit.fixtures import format_minor

#: The exponents of ISO 4217 the payments suites use (CLF: four, KWD: three, JPY: none).
EXPONENTS: Mapping[str, int] = {"CLF": 4, "EUR": 2, "JPY": 0, "KWD": 3, "USD": 2}
BERLIN = ZoneInfo("Europe/Berlin")


def money(amount_minor: int, currency: str, exponents: Mapping[str, int] = EXPONENTS) -> str:
    """The exact decimal string: (-5, "EUR") -> "-0.05", (12, "JPY") -> "12"."""
    return format_minor(amount_minor, exponents[currency])


def utc(created_at: str) -> datetime:
    """``2026-03-29T01:30:00Z`` as an aware UTC datetime."""
    return datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def local_day(created_at: str, zone: ZoneInfo = BERLIN) -> str:
    """The ISO day of a UTC timestamp in ``zone``."""
    return utc(created_at).astimezone(zone).date().isoformat()


def local_minute(created_at: str, zone: ZoneInfo = BERLIN) -> str:
    """``YYYY-MM-DD HH:MM`` of a UTC timestamp in ``zone``."""
    return utc(created_at).astimezone(zone).strftime("%Y-%m-%d %H:%M")


def sign_v1(secret: str, timestamp: str, body: bytes) -> str:
    """The webhook signature header value: ``v1=`` + HMAC-SHA256(secret, ts + "." + body)."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "v1=" + mac.hexdigest()
