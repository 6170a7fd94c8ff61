"""The refactor must not change a single error message."""

import pytest

import tomli

from .cases import CASES


@pytest.mark.parametrize(("doc", "msg", "pos", "line", "col"), CASES)
def test_message_unchanged(doc, msg, pos, line, col):
    with pytest.raises(tomli.TOMLDecodeError) as info:
        tomli.loads(doc)
    where = "end of document" if pos is None else f"line {line}, column {col}"
    assert str(info.value) == f"{msg} (at {where})"
    assert isinstance(info.value, ValueError)
    assert type(info.value).__module__ == "tomli"
