"""Where a Python project's importable code lives, as an installed package would see it.

A "src layout" project (``src/<package>/`` beside its packaging files) is importable
only once installed: its own CI installs it (tox, ``pip install -e .``). The verifier
runs hidden tests from the source tree without installing anything, so it puts ``src``
on ``sys.path`` right after the tree root, where an install would have put the package.
The tree root keeps precedence, and both come after the standard library (see
``runners.PYTEST_BOOT``): this gives the code under test no reach it does not already
have through the tree root.
"""

from __future__ import annotations

from pathlib import Path

PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")


def src_layout(tree: Path) -> bool:
    """True when ``tree`` is a src-layout project, read from the tree itself: a packaging
    file at its root, and ``src/`` holds a package (or module) and is not itself a
    package. Whether the packaging file names ``src`` does not matter: flit and hatch
    find ``src/<package>`` by themselves (tomli's pyproject.toml never says ``src``)."""
    src = tree / "src"
    if not src.is_dir() or src.is_symlink() or (src / "__init__.py").exists():
        return False
    if not any(p.suffix == ".py" or (p / "__init__.py").is_file() for p in src.iterdir()):
        return False
    return any((tree / n).is_file() and not (tree / n).is_symlink() for n in PACKAGING)
