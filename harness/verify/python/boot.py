"""The script that starts pytest for a hidden-test run (``python -s -c BOOT``).

pytest and its plugins are imported before the tree joins ``sys.path``, and the tree comes
after the standard library: a tree module cannot stand in for either. The plugins are the
modules of ``verify/python/plugins/``, read as text here and run in the test process, each
as a module of its own, in this order (the later ones read ``charged_skips``'s names).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from harness.verify.isolation import output_pipe
from harness.verify.python.layout import src_layout

PYTEST_BOOT = (
    "import sys\n"
    "sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"
    "import pytest\n"
    "import types as _types\n"
    "_harness_plugins = []  # given to pytest.main: registered as they are, not rewritten\n"
    "{plugins}"
    "std = [i for i, p in enumerate(sys.path) if '-packages' not in p]\n"
    "sys.path.insert(max(std, default=-1) + 1, '')\n"
    "{src}"
    "sys.argv[0] = 'pytest'\n"
    "raise SystemExit(int(pytest.main(plugins=_harness_plugins)))\n"
)
# a src-layout project's package, where an install would put it: right after the tree root
PYTEST_SRC = "sys.path.insert(sys.path.index('') + 1, 'src')\n"

# (plugin file, the name it runs as in the test process, its variable in the boot script,
# the names it is given before it runs); ``_m`` is charged_skips, which runs first
AGENTS = {"CHARGED": "_m.CHARGED", "LISTED": "_m.listed", "_agents": "_m._charged"}
PIPE = {"PIPE_ENV": repr(output_pipe.ENV), "TAMPERED": str(output_pipe.TAMPERED)}
PLUGINS: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    ("charged_skips", "skipcharge", "_m", {}),
    ("runner_guard", "runnerguard", "_g", {"_agents": AGENTS["_agents"]}),
    ("equality_guard", "eqguard", "_e", {"CHARGED": "_m.CHARGED", "_agent_file": "_m._charged"}),
    ("peek_guard", "peekguard", "_p", AGENTS),
    ("report_stream", "reportstream", "_o", PIPE),
)


def plugin_source(name: str) -> str:
    """The text of plugin ``name`` (``plugins/<name>.py``), as the test process runs it."""
    plugins = resources.files("harness.verify.python.plugins")
    return plugins.joinpath(f"{name}.py").read_text(encoding="utf-8")


def plugin_block(name: str, runs_as: str, var: str, given: dict[str, str]) -> str:
    """The boot script's lines that run one plugin as module ``harness_<runs_as>`` (its code
    compiled under ``<harness runs_as>``), after giving it ``given``, and hand it to pytest."""
    names = ", ".join(f"{k}={v}" for k, v in given.items())
    update = f"{var}.__dict__.update({names})\n" if given else ""
    return (
        f'\n{var} = _types.ModuleType("harness_{runs_as}")\n{update}'
        f'exec(compile({plugin_source(name)!r}, "<harness {runs_as}>", "exec"), {var}.__dict__)\n'
        f"_harness_plugins.append({var})\n"
    )


def pytest_boot(tree: Path) -> str:
    """The boot script for ``tree``: ``src`` joins the path after the tree root when the
    tree is a src-layout project (``layout.src_layout``)."""
    plugins = "".join(plugin_block(*plugin) for plugin in PLUGINS)
    boot = PYTEST_BOOT.replace("{plugins}", plugins)
    return boot.replace("{src}", PYTEST_SRC if src_layout(tree) else "")
