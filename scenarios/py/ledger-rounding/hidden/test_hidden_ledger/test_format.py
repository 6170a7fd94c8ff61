"""format_money: the currency's exponent, grouping, sign; exact for any size."""

import pytest

from ledger import Money, format_money


@pytest.mark.parametrize(
    ("money", "text"),
    [
        (Money(123456, "USD"), "1,234.56 USD"),
        (Money(5, "USD"), "0.05 USD"),
        (Money(-5, "USD"), "-0.05 USD"),
        (Money(-123456, "EUR"), "-1,234.56 EUR"),
        (Money(1234, "JPY"), "1,234 JPY"),
        (Money(-7, "KRW"), "-7 KRW"),
        (Money(1005, "KWD"), "1.005 KWD"),
        (Money(-1234567, "BHD"), "-1,234.567 BHD"),
        (Money(0, "BHD"), "0.000 BHD"),
        (Money(10**17 + 1, "USD"), "1,000,000,000,000,000.01 USD"),
    ],
)
def test_format(money: Money, text: str) -> None:
    assert format_money(money) == text


@pytest.mark.parametrize("currency", ["JPY", "USD", "KWD"])
@pytest.mark.parametrize("minor", [0, 1, -1, 999, -1000, 123456789, 10**19 + 7])
def test_format_digits_follow_exponent(currency: str, minor: int) -> None:
    text = format_money(Money(minor, currency))
    amount, code = text.split(" ")
    assert code == currency
    digits = amount.lstrip("-").replace(",", "")
    exp = {"JPY": 0, "USD": 2, "KWD": 3}[currency]
    if exp:
        whole, fraction = digits.split(".")
        assert len(fraction) == exp
    else:
        assert "." not in digits
        whole, fraction = digits, ""
    assert int(whole + fraction) == abs(minor)
    assert amount.startswith("-") == (minor < 0)
