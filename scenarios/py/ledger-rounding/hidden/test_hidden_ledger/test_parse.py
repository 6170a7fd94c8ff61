"""parse_money: exact conversion, no rounding, strict grammar."""

import pytest

from ledger import Money, UnknownCurrency, parse_money


@pytest.mark.parametrize(
    ("text", "minor", "code"),
    [
        ("0.29 USD", 29, "USD"),
        ("0.57 USD", 57, "USD"),
        ("1.15 EUR", 115, "EUR"),
        ("4.35 GBP", 435, "GBP"),
        ("1.005 KWD", 1005, "KWD"),
        ("2.675 BHD", 2675, "BHD"),
        ("-0.07 USD", -7, "USD"),
        ("-19.99 USD", -1999, "USD"),
        ("12.5 USD", 1250, "USD"),
        ("3 KWD", 3000, "KWD"),
        ("1234 JPY", 1234, "JPY"),
        ("1,234.56 usd", 123456, "USD"),
        ("  7.10   CHF  ", 710, "CHF"),
        ("123456789012345678.91 USD", 12345678901234567891, "USD"),
    ],
)
def test_parse_exact(text: str, minor: int, code: str) -> None:
    assert parse_money(text) == Money(minor, code)


@pytest.mark.parametrize("text", ["1.239 USD", "100.5 JPY", "0.0001 KWD", "9.999 EUR"])
def test_parse_rejects_excess_precision(text: str) -> None:
    with pytest.raises(ValueError):
        parse_money(text)


@pytest.mark.parametrize(
    "text",
    ["", "USD", "12.00", "1e3 USD", "nan USD", "inf USD", "+5 USD", ".5 USD", "5. USD",
     "1 2 USD", "abc USD"],
)
def test_parse_rejects_malformed(text: str) -> None:
    with pytest.raises(ValueError):
        parse_money(text)


def test_parse_unknown_currency() -> None:
    with pytest.raises(UnknownCurrency):
        parse_money("1.00 XYZ")
