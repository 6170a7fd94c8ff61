from calc import clamp


def test_below_low_is_raised_to_low() -> None:
    assert clamp(-5, 0, 10) == 0


def test_inside_is_unchanged() -> None:
    assert clamp(3, 0, 10) == 3
