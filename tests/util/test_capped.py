"""The capped stream buffer that the test-run reader and the Docker exec pump share."""

from __future__ import annotations

from harness.sandbox.docker_io import Capture
from harness.util.capped import Capped


def test_keeps_the_first_bytes_and_counts_the_rest() -> None:
    buf = Capped(5)
    for chunk in (b"abc", None, b"", b"defg", b"hij"):
        buf.add(chunk)
    assert buf.text() == "abcde"
    assert buf.dropped == 5


def test_a_stream_at_its_cap_drops_nothing() -> None:
    buf = Capped(4)
    buf.add(b"ab")
    buf.add(b"cd")
    assert (buf.text(), buf.dropped) == ("abcd", 0)


def test_undecodable_bytes_are_replaced_not_raised() -> None:
    buf = Capped(8)
    buf.add(b"ok\xff")
    assert buf.text() == "ok\ufffd"


def test_capture_notes_the_cut_only_on_the_stream_that_overflowed() -> None:
    cap = Capture(3)
    cap.add(0, b"12345")
    cap.add(1, b"xy")
    assert cap.dropped == 2
    assert cap.text(0).startswith("123\n[harness: output over 3 bytes")
    assert cap.text(1) == "xy"
