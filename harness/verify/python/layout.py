"""Where a Python project's importable code lives, as an installed package would see it.

A "src layout" project (``src/<package>/``, named by its packaging files) is importable
only once installed: its own CI installs it (tox, ``pip install -e .``). The verifier
runs hidden tests from the source tree without installing anything, so it puts ``src``
on ``sys.path`` right after the tree root, where an install would have put the package.
The tree root keeps precedence, and both come after the standard library (see
``runners.PYTEST_BOOT``): this gives the code under test no reach it does not already
have through the tree root.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGING = ("pyproject.toml", "setup.cfg", "setup.py")
# setuptools' `package-dir = {"" = "src"}` / `where = ["src"]`; hatch and flit find
# src/<package> by themselves, and their files name src/ paths (version files, globs)
SRC_NAMED = re.compile(r"\bsrc\b")


def src_layout(tree: Path) -> bool:
    """True when ``tree`` is a src-layout project: ``src/`` holds a package (or module),
    is not itself a package, and a packaging file of the tree names it."""
    src = tree / "src"
    if not src.is_dir() or src.is_symlink() or (src / "__init__.py").exists():
        return False
    if not any(p.suffix == ".py" or (p / "__init__.py").is_file() for p in src.iterdir()):
        return False
    for name in PACKAGING:
        path = tree / name
        if path.is_file() and not path.is_symlink():
            text = path.read_text(errors="replace")[:200_000]
            if SRC_NAMED.search(text):
                return True
    return False
