"""Money strings and Berlin calendar days, both exact (integers and zoneinfo, no floats)."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

EXPONENTS = {"EUR": 2, "USD": 2, "JPY": 0, "KWD": 3}
BERLIN = ZoneInfo("Europe/Berlin")


def format_minor(amount, currency):
    exponent = EXPONENTS[currency]
    sign = "-" if amount < 0 else ""
    if exponent == 0:
        return f"{sign}{abs(amount)}"
    whole, frac = divmod(abs(amount), 10**exponent)
    return f"{sign}{whole}.{frac:0{exponent}d}"


def _utc(created_at):
    return datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def berlin_day(created_at):
    return _utc(created_at).astimezone(BERLIN).date().isoformat()


def berlin_minute(created_at):
    return _utc(created_at).astimezone(BERLIN).strftime("%Y-%m-%d %H:%M")
