"""Minor units -> display strings, exactly (no floats)."""

EXPONENTS = {"JPY": 0, "KRW": 0, "USD": 2, "EUR": 2, "GBP": 2, "KWD": 3, "BHD": 3, "JOD": 3}


def format_minor(amount_minor: int, currency: str) -> str:
    """1234 JPY -> "1234", 1234 USD -> "12.34", 1234 KWD -> "1.234"."""
    exponent = EXPONENTS.get(currency, 2)
    sign = "-" if amount_minor < 0 else ""
    value = abs(amount_minor)
    if exponent == 0:
        return f"{sign}{value}"
    whole, frac = divmod(value, 10**exponent)
    return f"{sign}{whole}.{frac:0{exponent}d}"
