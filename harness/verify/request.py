"""Build a VerifyRequest from a scenario and a workspace state."""

from __future__ import annotations

from pathlib import Path

from harness.scenario import LoadedScenario
from harness.verify.engine import HiddenCopy, VerifyRequest

GOCACHE_INSIDE = "/opt/harness-gocache"


def make_request(
    loaded: LoadedScenario,
    workspace: Path,
    baseline: str,
    seed: str,
    *,
    copy_only: bool = False,
    sandbox: str = "docker",
) -> VerifyRequest:
    scn = loaded.scenario
    v = scn.verify
    chain: dict[str, object] = {}
    if not copy_only:
        chain = _provisioned(loaded, workspace, baseline, sandbox)
    return VerifyRequest(
        **chain,  # type: ignore[arg-type]
        scenario=loaded.name,
        baseline=baseline,
        seed=seed,
        runner=scn.runner(workspace),
        must_modify=v.must_modify,
        no_modify=v.no_modify,
        only_modify=v.only_modify,
        tests=v.tests,
        partial_tests=v.partial_tests,
        copy=[HiddenCopy(**{"from": c.from_, "to": c.to}) for c in v.copy_],
        hidden_root=str(loaded.directory),
        suite_dir=str(loaded.directory / v.suite) if v.suite else None,
        timeout_s=scn.environment.verify_timeout,
        copy_only=copy_only,
    )


def _provisioned(
    loaded: LoadedScenario, workspace: Path, baseline: str, sandbox: str
) -> dict[str, object]:
    """The toolchain and dependency fields of the request. A download or resolution
    failure becomes ``provision_error`` (the verdict is then ``error``), never a crash."""
    from harness.errors import InfraError
    from harness.provision import provision
    from harness.toolchain import local_python

    try:
        prov = provision(loaded, workspace, baseline, sandbox)
    except InfraError as exc:
        return {"provision_error": exc.one_line()}
    mounts, docker_env, local_env = prov.mounts(), prov.env("docker"), prov.env("local")
    if prov.runner == "go":
        # The verifier's own build cache, kept between trials and shared by Docker and
        # local (Go's cache keys do not depend on where GOROOT sits): the standard
        # library is compiled once per machine, not once per verification.
        from harness.images.bootstrap import cache_dir

        gocache = cache_dir() / "gocache-verify"
        gocache.mkdir(parents=True, exist_ok=True)
        local_env["GOCACHE"] = str(gocache)
        if sandbox == "docker":
            mounts[str(_docker_gocache(cache_dir()))] = f"{GOCACHE_INSIDE}:rw"
            docker_env["GOCACHE"] = GOCACHE_INSIDE
    python = local_python(prov.python) if sandbox == "local" else None
    return {
        **({"python": python} if python else {}),
        "env": local_env,
        "docker_env": docker_env,
        "mounts": mounts,
        "toolchain": prov.record(),
    }


def _docker_gocache(cache: Path) -> Path:
    """The containers' verifier build cache: apart from the host's, and owned by the
    sandboxes' unprivileged run user, so the hardened (non-root) verifier can write it."""
    import os

    from harness.sandbox.docker import SANDBOX_UID

    gocache = cache / "gocache-verify-docker"
    gocache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0 and gocache.stat().st_uid != SANDBOX_UID:
        for root, dirs, files in os.walk(gocache):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), SANDBOX_UID, SANDBOX_UID)
        os.chown(gocache, SANDBOX_UID, SANDBOX_UID)
    elif os.geteuid() != 0 and gocache.stat().st_uid == os.geteuid():
        gocache.chmod(0o777)  # cannot give it away: let the run user create its entries
    return gocache
