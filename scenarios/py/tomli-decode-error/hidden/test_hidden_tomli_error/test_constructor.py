"""TOMLDecodeError(msg, doc, pos) can be raised by other code, like json.JSONDecodeError."""

import warnings

import pytest

from tomli import TOMLDecodeError


def test_positional():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = TOMLDecodeError("Bad thing", "abc\ndef\nghi", 6)
    assert (err.msg, err.doc, err.pos) == ("Bad thing", "abc\ndef\nghi", 6)
    assert (err.lineno, err.colno) == (2, 3)
    assert str(err) == "Bad thing (at line 2, column 3)"


def test_keywords():
    err = TOMLDecodeError(msg="Oops", doc="x = 1", pos=0)
    assert (err.lineno, err.colno) == (1, 1)
    assert str(err) == "Oops (at line 1, column 1)"


@pytest.mark.parametrize(("pos", "line", "col"), [(3, 1, 4), (4, 2, 1), (7, 2, 4)])
def test_line_starts_and_end_of_document(pos, line, col):
    err = TOMLDecodeError("m", "abc\ndef", pos)
    assert (err.lineno, err.colno) == (line, col)
    expected = "end of document" if pos >= 7 else f"line {line}, column {col}"
    assert str(err) == f"m (at {expected})"


def test_raisable_and_catchable_as_value_error():
    with pytest.raises(ValueError, match=r"^Custom \(at line 1, column 2\)$"):
        raise TOMLDecodeError("Custom", "ab", 1)
