"""The payments suites' helpers: money strings, local days, signed webhooks
(appkit/payments.py)."""

from __future__ import annotations

import hashlib
import hmac
from zoneinfo import ZoneInfo

import pytest

from harness.appkit.payments import local_day, local_minute, money, sign_v1, utc

pytestmark = pytest.mark.unit


def test_money_days_and_signature() -> None:
    assert money(-5, "EUR") == "-0.05" and money(12, "JPY") == "12"
    assert money(2**53 + 1, "CLF") == "900719925474.0993"
    assert money(-1, "KWD") == "-0.001"
    # 2026-03-29 is the DST change: 22:30 UTC the day before is 23:30 in Berlin,
    # 22:30 UTC on the 29th is already 00:30 of the 30th
    assert local_day("2026-03-28T22:30:00Z") == "2026-03-28"
    assert local_day("2026-03-29T22:30:00Z") == "2026-03-30"
    assert local_minute("2026-03-29T00:59:00Z") == "2026-03-29 01:59"
    assert local_minute("2026-03-29T01:00:00Z") == "2026-03-29 03:00"
    sig = sign_v1("whsec_x", "1700000000", b'{"a":1}')
    assert sig.startswith("v1=") and len(sig) == 67
    assert sig != sign_v1("whsec_y", "1700000000", b'{"a":1}')
    assert sig != sign_v1("whsec_x", "1700000001", b'{"a":1}')


def test_money_reads_the_exponent_it_is_given() -> None:
    assert money(12345, "XYZ", {"XYZ": 3}) == "12.345"
    assert money(100, "USD") == "1.00"
    with pytest.raises(KeyError):
        money(1, "XYZ")


def test_timestamps_are_utc_and_zones_can_be_chosen() -> None:
    when = utc("2026-03-29T01:30:00Z")
    assert when.utcoffset() is not None and when.utcoffset().total_seconds() == 0
    assert (when.hour, when.minute) == (1, 30)
    tokyo = ZoneInfo("Asia/Tokyo")
    assert local_day("2026-03-28T16:00:00Z", tokyo) == "2026-03-29"
    assert local_minute("2026-03-28T16:05:00Z", tokyo) == "2026-03-29 01:05"
    with pytest.raises(ValueError):
        utc("2026-03-29 01:30:00")  # not the vendor's form


def test_the_signature_is_hmac_sha256_over_timestamp_dot_body() -> None:
    want = hmac.new(b"k", b"1700000000.{}", hashlib.sha256).hexdigest()
    assert sign_v1("k", "1700000000", b"{}") == "v1=" + want
    assert sign_v1("k", "1700000000", b"{} ") != sign_v1("k", "1700000000", b"{}")
