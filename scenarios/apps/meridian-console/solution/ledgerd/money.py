"""Money strings and Berlin days (SPEC section 2)."""

from datetime import datetime, timezone
from zoneinfo import ZoneInfo

EXPONENTS = {"CLF": 4, "EUR": 2, "JPY": 0, "KWD": 3, "USD": 2}
STATUSES = ("pending", "settled", "failed", "refunded")
BERLIN = ZoneInfo("Europe/Berlin")


def money(amount_minor, currency):
    """Minor units as the money string of the currency: (-5, EUR) -> "-0.05"."""
    exp = EXPONENTS[currency]
    sign = "-" if amount_minor < 0 else ""
    digits = str(abs(amount_minor))
    if exp == 0:
        return sign + digits
    digits = digits.rjust(exp + 1, "0")
    return f"{sign}{digits[:-exp]}.{digits[-exp:]}"


def berlin_day(created_at):
    when = datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return when.astimezone(BERLIN).date().isoformat()


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
