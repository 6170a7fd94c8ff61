"""What each ``scenario.yml`` field means: the descriptions ``harness schema scenario`` shows.

Kept apart from ``scenario/model.py`` (the validation) so the model stays short; ``describe``
writes them onto the models' fields once, at import. Descriptions change the schema's
text only: validation, loading and scenario hashes do not depend on them.
"""

from __future__ import annotations

from pydantic import BaseModel

DESCRIPTIONS: dict[str, dict[str, str]] = {
    "Scenario": {
        "name": "the scenario's name, <family>/<name> (its folder's path under scenarios/)",
        "repo": "the repository the task starts from (a URL, or a local mirror's path)",
        "commit": "the commit the workspace is checked out at",
        "classification": "what kind of task this is (goagentbench's classification)",
        "setup": "steps run on the workspace before the agent starts",
        "agent": "what the agent is told, and whether it may take more turns",
        "verify": "how the result is judged: modification rules, hidden tests, a suite",
        "version": "semver of the scenario; any change to its files needs a bump",
        "spec": "a SPEC file (in the scenario folder) the agent is given",
        "seed": "the scorer's default seed (the secret seed is drawn per trial)",
        "environment": "image, resources and toolchain pins of agent and verifier",
        "solution": "the reference solution (a folder or patch) that proves the grader",
        "sandbox": "the agent sandbox's hardening; every field defaults to the hardened choice",
        "budget": "per-trial limits on tokens, cost and model calls (none: unlimited)",
        "task_date": "when the task arose upstream (a mined fix's commit date); reports can "
        "keep only tasks after a date (--tasks-after)",
    },
    "Classification": {
        "type": "build-package, fix-bug, feature or refactor",
        "has_spec": "the agent is given a written specification",
        "single_package": "the change stays inside one package",
        "sees_failing_tests": "the agent can see failing tests that describe the task",
    },
    "Setup": {
        "copy_": "files copied from the scenario folder into the workspace (from, to)",
        "patch": "patches (in the scenario folder) applied to the workspace, in order",
        "exec": "shell commands run in the workspace, in order",
    },
    "CopyStep": {
        "from_": "a file or folder in the scenario folder",
        "to": "the folder in the workspace it is copied to (. for its root)",
    },
    "AgentSection": {
        "package": "the package (folder) the task is about, when it is one",
        "instructions": "the task the agent is given",
        "allow_multiple_turns_on_failed_verify": "a failed verify gives the agent another turn",
    },
    "VerifySection": {
        "must_modify": "paths the agent must change",
        "no_modify": "paths the agent must not change",
        "only_modify": "the only paths the agent may change",
        "copy_": "hidden files copied in before the tests run (from, to)",
        "tests": "required test targets: each must pass",
        "partial_tests": "partial test targets: graded by the share that passes",
        "runner": "the test runner (go or pytest); default: guessed from the targets",
        "suite": "a suite folder (suite/suite.py) that grades the tree instead of tests",
        "tests_from": "hidden tests read from the repository's own fix commit at verification "
        "time (commit, paths); never copied into the project nor reachable from the workspace",
        "runner_files": "globs of runner-steering files (conftest.py, ini sections, go.mod "
        "redirects) that keep the agent's version; every other one is restored to the baseline",
    },
    "TestsFrom": {
        "commit": "the fix commit the hidden test files are read from",
        "paths": "the test files (paths in the repository) taken from that commit",
    },
    "Environment": {
        "image": "the toolchain image agent and verifier run in (default: by language)",
        "cpus": "CPUs for each sandbox",
        "memory": "memory for each sandbox, e.g. 4g",
        "pids": "process limit for each sandbox",
        "agent_timeout": "the agent's wall-time limit (seconds, or 30m, 1h)",
        "verify_timeout": "the verifier's wall-time limit (seconds, or 10m)",
        "go": 'a pinned Go release ("1.24"; else go.mod\'s), or "system" for the image\'s',
        "python": 'the Python the task needs, e.g. "3.11" (refused where absent)',
        "cgo": "build the hidden Go tests with cgo (default off: CGO_ENABLED=0, so nothing "
        "of the tree runs while they are built)",
    },
    "SandboxPolicy": {
        "read_only_root": "the root filesystem is read-only (only the workspace, $HOME, /tmp "
        "and scratch folders are writable)",
        "no_new_privileges": "set no-new-privileges (setuid binaries gain nothing)",
        "non_root": "the agent runs as the workspace owner's uid, never root",
        "capabilities": "Linux capabilities kept (default: every one dropped)",
        "workspace_size": "the most the workspace may grow to, e.g. 4g",
        "tmp_size": "size of the /tmp tmpfs",
        "home_size": "size of the $HOME tmpfs",
        "output_limit": "output kept per stream of a command; the rest is counted and dropped",
    },
}


def describe(*models: type[BaseModel]) -> None:
    """Put the descriptions above on ``models``' fields and rebuild their schemas."""
    for model in models:
        table = DESCRIPTIONS.get(model.__name__, {})
        for name, text in table.items():
            if name in model.model_fields:  # a field another branch removed is skipped
                model.model_fields[name].description = text
        model.model_rebuild(force=True)


__all__ = ["DESCRIPTIONS", "describe"]
