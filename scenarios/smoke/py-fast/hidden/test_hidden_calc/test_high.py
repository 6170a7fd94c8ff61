from calc import clamp


def test_above_high_is_lowered_to_high() -> None:
    assert clamp(15, 0, 10) == 10


def test_high_edge() -> None:
    assert clamp(10, 0, 10) == 10
