"""A suite's modules run from their sources: a bytecode cache planted beside them (checked
by stamp or never checked) and a sourceless ``.pyc`` are not what runs."""

from __future__ import annotations

import py_compile
import sys
from pathlib import Path

import pytest

from harness.verify.suite_source import import_suite

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import_suite`` turns the process's bytecode caches off; this test's process gets
    them back after."""
    monkeypatch.setattr(sys, "pycache_prefix", sys.pycache_prefix)
    monkeypatch.setattr(sys, "dont_write_bytecode", sys.dont_write_bytecode)


ENTRY = """\
from pathlib import Path
__path__ = [str(Path(__file__).parent)]
__package__ = __name__
from . import rule
VALUE = rule.LIMIT
"""


def _suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "suite.py").write_text(ENTRY)
    (folder / "rule.py").write_text("LIMIT = 1\n")
    return folder


def _plant(folder: Path, module: str, source: str, mode: py_compile.PycInvalidationMode) -> None:
    """A cache for ``module`` that Python's own loader would take for the real one."""
    real = folder / f"{module}.py"
    fake = folder / "fake.py"
    fake.write_text(source)
    cache = Path(sys.implementation.cache_tag and real.parent / "__pycache__")
    cache.mkdir(exist_ok=True)
    target = cache / f"{module}.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(fake), cfile=str(target), dfile=str(real), invalidation_mode=mode)
    fake.unlink()
    if mode is py_compile.PycInvalidationMode.TIMESTAMP:  # the stamp of the real source
        data = bytearray(target.read_bytes())
        stat = real.stat()
        data[8:12] = int(stat.st_mtime).to_bytes(4, "little")
        data[12:16] = (stat.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        target.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "mode",
    [py_compile.PycInvalidationMode.TIMESTAMP, py_compile.PycInvalidationMode.UNCHECKED_HASH],
    ids=["stamp", "unchecked"],
)
def test_a_planted_cache_is_not_what_runs(
    tmp_path: Path, mode: py_compile.PycInvalidationMode
) -> None:
    folder = _suite(tmp_path)
    _plant(folder, "rule", "LIMIT = 99\n", mode)
    _plant(folder, "suite", ENTRY.replace("rule.LIMIT", "rule.LIMIT + 1000"), mode)
    name = f"suite_source_{mode.name.lower()}"
    module = import_suite(name, folder / "suite.py")
    assert module.VALUE == 1
    assert sys.modules[f"{name}.rule"].LIMIT == 1
    assert not list((folder / "__pycache__").glob("*.fake*"))


def test_a_sourceless_module_of_the_package_is_not_found(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    (folder / "rule.py").write_text("LIMIT = 5\n")
    py_compile.compile(str(folder / "rule.py"), cfile=str(folder / "rule.pyc"))
    (folder / "rule.py").unlink()
    with pytest.raises(ImportError, match="rule"):  # not the sourceless rule.pyc
        import_suite("suite_source_sourceless", folder / "suite.py")


HELPER_ENTRY = """\
import importlib.util
import sys
from pathlib import Path
HERE = Path(__file__).parent
spec = importlib.util.spec_from_file_location(__name__ + "_rule", HERE / "rule.py")
rule = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = rule
spec.loader.exec_module(rule)
VALUE = rule.LIMIT
"""


def test_a_suite_s_own_loader_runs_no_planted_cache(tmp_path: Path) -> None:
    """A one-file suite's loader helper uses Python's own loader: once a suite is
    imported, no loader of the process reads a cache beside a source."""
    folder = _suite(tmp_path)
    (folder / "suite.py").write_text(HELPER_ENTRY)
    _plant(folder, "rule", "LIMIT = 99\n", py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert import_suite("suite_source_helper", folder / "suite.py").VALUE == 1


def test_every_import_is_a_fresh_load_of_the_package(tmp_path: Path) -> None:
    """State a module of the package kept from an earlier scoring in the process is gone
    at the next import, as it is for a suite of one file."""
    folder = _suite(tmp_path)
    (folder / "rule.py").write_text("LIMIT = 1\nSEEN: list[int] = []\n")
    first = import_suite("suite_source_fresh", folder / "suite.py")
    sys.modules["suite_source_fresh.rule"].SEEN.append(1)
    again = import_suite("suite_source_fresh", folder / "suite.py")
    assert again is not first
    assert sys.modules["suite_source_fresh.rule"].SEEN == []
