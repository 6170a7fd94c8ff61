"""Offline Go fixtures: a file-based module proxy (GOPROXY=file://...) and a scenario on a
go 1.24 module that depends on a module only that proxy serves."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path

from tests.conftest import git, make_bundle

DEP = "example.com/greet"
DEP_VERSION = "v1.0.0"
DEP_FILES = {
    "go.mod": f"module {DEP}\n\ngo 1.21\n",
    "greet.go": "package greet\n\n// Greet says hello.\n"
    'func Greet(name string) string { return "hello, " + name }\n',
}


def _h1(files: dict[str, bytes]) -> str:
    """Go's dirhash Hash1 over ``files`` (name -> content)."""
    summary = "".join(
        f"{hashlib.sha256(files[name]).hexdigest()}  {name}\n" for name in sorted(files)
    )
    return "h1:" + base64.b64encode(hashlib.sha256(summary.encode()).digest()).decode()


def make_proxy(root: Path) -> tuple[Path, str]:
    """A GOPROXY folder serving DEP@DEP_VERSION; returns (folder, go.sum text)."""
    base = root / DEP / "@v"
    base.mkdir(parents=True)
    prefix = f"{DEP}@{DEP_VERSION}/"
    zipped = {prefix + n: t.encode() for n, t in DEP_FILES.items()}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in zipped.items():
            zf.writestr(name, data)
    (base / "list").write_text(DEP_VERSION + "\n")
    (base / f"{DEP_VERSION}.info").write_text(
        json.dumps({"Version": DEP_VERSION, "Time": "2024-01-01T00:00:00Z"})
    )
    (base / f"{DEP_VERSION}.mod").write_text(DEP_FILES["go.mod"])
    (base / f"{DEP_VERSION}.zip").write_bytes(buf.getvalue())
    go_sum = (
        f"{DEP} {DEP_VERSION} {_h1(zipped)}\n"
        f"{DEP} {DEP_VERSION}/go.mod {_h1({'go.mod': DEP_FILES['go.mod'].encode()})}\n"
    )
    return root, go_sum


APP_BASE = """package app

import "example.com/greet"

// Hello greets name, with an exclamation mark.
func Hello(name string) string {
	_ = greet.Greet
	return ""
}
"""
APP_SOLVED = APP_BASE.replace('\t_ = greet.Greet\n\treturn ""', '\treturn greet.Greet(name) + "!"')
APP_TEST = """package app

import "testing"

func TestHello(t *testing.T) {
	for i := range 2 { // range over an int: Go 1.22 or newer
		if got := Hello("go"); got != "hello, go!" {
			t.Fatalf("%d: Hello = %q", i, got)
		}
	}
}
"""


def go_scenario(project: Path, name: str = "gomod/greet", go_line: str = "1.24.4") -> Path:
    """A scenario whose repo needs Go >= ``go_line`` and the proxy-only module; with a
    solution patch, a hidden test, and a required target without test files."""
    _, go_sum = make_proxy(project / "goproxy")
    folder = project / "scenarios" / name
    folder.mkdir(parents=True)
    files = {
        "go.mod": f"module example.com/app\n\ngo {go_line}\n\nrequire {DEP} {DEP_VERSION}\n",
        "go.sum": go_sum,
        "app/app.go": APP_BASE,
        "internal/notest/notest.go": "package notest\n\n// N is here.\nconst N = 1\n",
    }
    work = project / "work-repo"
    sha = make_bundle(work, folder / "repo.bundle", files)
    # the solution: a patch from a second commit
    repo = project / "work-sol"
    git(["clone", "-q", str(folder / "repo.bundle"), str(repo)], project)
    (repo / "app" / "app.go").write_text(APP_SOLVED)
    (folder / "solution.patch").write_text(git(["diff"], repo) + "\n")
    (folder / "hidden").mkdir()
    (folder / "hidden" / "app_test.go").write_text(APP_TEST)
    (folder / "scenario.yml").write_text(
        f"""name: greet
repo: repo.bundle
commit: {sha}
solution: solution.patch
classification:
  type: feature
agent:
  instructions: Make Hello greet with greet.Greet and an exclamation mark.
verify:
  must-modify: app
  copy:
    - from: hidden/app_test.go
      to: app/
  tests:
    - ./app
    - ./internal/notest
"""
    )
    return folder


def offline_env(project: Path) -> dict[str, str]:
    """Where setup may fetch modules: the file proxy, no checksum database."""
    return {"GOPROXY": f"file://{project / 'goproxy'}", "GOSUMDB": "off"}
