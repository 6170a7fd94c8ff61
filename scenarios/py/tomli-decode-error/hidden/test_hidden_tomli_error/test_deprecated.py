"""Other argument forms still work, with a DeprecationWarning."""

import pytest

from tomli import TOMLDecodeError


def test_free_form_message():
    with pytest.warns(DeprecationWarning):
        err = TOMLDecodeError("just a message")
    assert str(err) == "just a message"
    assert isinstance(err, ValueError)


def test_no_arguments():
    with pytest.warns(DeprecationWarning):
        err = TOMLDecodeError()
    assert str(err) == ""


def test_extra_arguments():
    with pytest.warns(DeprecationWarning):
        err = TOMLDecodeError("m", "doc", 1, "extra")
    assert err.args == ("m", "doc", 1, "extra")
