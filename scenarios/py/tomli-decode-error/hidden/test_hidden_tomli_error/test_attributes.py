"""Errors raised by loads() carry where they happened."""

import pytest

import tomli

from .cases import CASES


@pytest.mark.parametrize(("doc", "msg", "pos", "line", "col"), CASES)
def test_error_attributes(doc, msg, pos, line, col):
    with pytest.raises(tomli.TOMLDecodeError) as info:
        tomli.loads(doc)
    err = info.value
    assert err.msg == msg
    assert err.doc == doc
    assert err.pos == (len(doc) if pos is None else pos)
    assert (err.lineno, err.colno) == (line, col)


def test_load_from_binary_file_has_the_decoded_document(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes("name = \"é\"\nnumber = 12x\n".encode())
    with path.open("rb") as fp, pytest.raises(tomli.TOMLDecodeError) as info:
        tomli.load(fp)
    assert info.value.doc == "name = \"é\"\nnumber = 12x\n"
    assert (info.value.lineno, info.value.colno) == (2, 12)
