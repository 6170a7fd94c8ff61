"""Offline Python fixtures: a hand-made wheel in a local folder (the "index"), and a
scenario whose repo requires it in requirements.txt."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from tests.conftest import git, make_bundle

WHEEL = "tinydep-1.0-py3-none-any.whl"


def make_wheel(folder: Path) -> Path:
    """``tinydep 1.0``: one module with ``double(x)``."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "tinydep/__init__.py": "def double(x):\n    return 2 * x\n",
        "tinydep-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
        "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("tinydep-1.0.dist-info/RECORD,,")
    files["tinydep-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    path = folder / WHEEL
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def py_scenario(
    project: Path, name: str = "pydeps/quad", deps: dict[str, str] | None = None
) -> Path:
    """``deps``: the repo's files that declare tinydep (default: a requirements.txt)."""
    make_wheel(project / "index")
    folder = project / "scenarios" / name
    folder.mkdir(parents=True)
    base = "import tinydep\n\n\ndef quad(x):\n    return tinydep.double(x)\n"
    files = {**(deps or {"requirements.txt": "tinydep==1.0\n"}), "quad.py": base}
    sha = make_bundle(project / "work-repo", folder / "repo.bundle", files)
    repo = project / "work-sol"
    git(["clone", "-q", str(folder / "repo.bundle"), str(repo)], project)
    (repo / "quad.py").write_text(
        base.replace("tinydep.double(x)", "tinydep.double(tinydep.double(x))")
    )
    (folder / "solution.patch").write_text(git(["diff"], repo) + "\n")
    (folder / "hidden").mkdir()
    (folder / "hidden" / "test_quad.py").write_text(
        "from quad import quad\n\n\ndef test_quad():\n    assert quad(3) == 12\n"
    )
    (folder / "scenario.yml").write_text(
        f"""name: quad
repo: repo.bundle
commit: {sha}
solution: solution.patch
classification:
  type: fix-bug
environment:
  python: "3.11"
agent:
  instructions: quad(x) must return four times x.
verify:
  copy:
    - from: hidden/test_quad.py
      to: test_quad.py
  tests:
    - test_quad.py
"""
    )
    return folder


def index_env(project: Path) -> dict[str, str]:
    """Where setup may fetch wheels: only the local folder."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(project / "index")}
