"""The boot script hands pytest the plugins of ``verify/python/plugins/``, read as text."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from harness.verify.python.boot import PLUGINS, plugin_source, pytest_boot

pytestmark = pytest.mark.unit

HARNESS = Path(__file__).resolve().parents[3] / "harness"
PLUGIN_DIR = HARNESS / "verify" / "python" / "plugins"
MAX_ARG_STRLEN = 128 * 1024  # Linux: the longest single argument (`python -c BOOT`)


def test_every_plugin_file_is_handed_to_pytest_once_in_order() -> None:
    files = sorted(p.stem for p in PLUGIN_DIR.glob("*.py") if p.name != "__init__.py")
    assert sorted(name for name, *_ in PLUGINS) == files
    assert PLUGINS[0][0] == "charged_skips"  # the others read its names
    boot = pytest_boot(PLUGIN_DIR)
    at = [boot.index(f'"<harness {runs_as}>"') for _, runs_as, _, _ in PLUGINS]
    assert at == sorted(at)


def test_the_boot_script_runs_each_plugin_text_as_written() -> None:
    boot = pytest_boot(PLUGIN_DIR)
    assert len(boot.encode()) < MAX_ARG_STRLEN
    compile(boot, "<boot>", "exec")
    for name, runs_as, var, _ in PLUGINS:
        text = plugin_source(name)
        assert text == (PLUGIN_DIR / f"{name}.py").read_text(encoding="utf-8")
        assert f'exec(compile({text!r}, "<harness {runs_as}>", "exec"), {var}.__dict__)' in boot
        assert f'{var} = _types.ModuleType("harness_{runs_as}")' in boot


def test_plugins_import_only_the_standard_library_and_pytest() -> None:
    allowed = set(sys.stdlib_module_names) | {"pytest", "_pytest", "pluggy", "__future__"}
    for path in PLUGIN_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_no_harness_module_holds_code_in_a_string_for_exec() -> None:
    held = []
    for path in HARNESS.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in {"exec", "compile"}
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                held.append(f"{path.relative_to(HARNESS)}:{node.lineno}")
    text = "\n".join(p.read_text(encoding="utf-8") for p in HARNESS.rglob("*.py"))
    assert held == [] and 'exec(compile(r"""' not in text
