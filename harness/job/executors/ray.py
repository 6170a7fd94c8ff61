"""The Ray executor: each trial a Ray task on a cluster node that has a Docker engine.

Nodes say they can run trials by declaring a ``docker`` resource (``ray start
--resources '{"docker": N}'``: N trials at once on that node); each task asks for one.
The project folder (agents.yml, llms.yml, scenarios/, images/, fleet.yml; not results,
workspaces or jobs) travels to the nodes as the tasks' Ray working directory, and the
settings travel as JSON, their project paths rewritten to where the project landed on
the node. A node builds the images a trial needs itself, from the same content-addressed
recipes, the first time a trial needs them (the Docker backend's ``ensure_image``).

A task runs the trial in a scratch folder of its node (results and workspace), packs the
run's result folder and returns it; the driver unpacks it into its own results folder
under the same relative path, placed with one rename, so resume, reports and the board
see exactly what a local run writes. Nothing is written for a task that did not return:
a node lost mid-trial becomes an infrastructure interruption (outcome ``error``), which
the runner retries, up to ``--max-interruptions``, wherever Ray places it next.

``import ray`` happens only here and only when this executor is used, so harness works
without it (``pip install -e '.[ray]'`` adds it).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import socket
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness.config.settings import Settings, read_env
from harness.errors import InfraError, UserError
from harness.job.executors.base import GRACE_S, LocalExecutor, TrialFiles
from harness.job.worker import settings_to_json

EXTRA_HINT = "pip install -e '.[ray]'  (or: pip install 'ray==2.60.0')"
RESOURCE = "docker"  # what a node declares to receive trials
POLL_S = 0.5
# never shipped to the nodes: outputs, caches, environments
SHIP_EXCLUDES = [
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    "*.pyc",
    "node_modules",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "/results",
    "/workspace",
    "/jobs",
]
ROUTER_ENV = "HARNESS_FLEET_ROUTER"  # harness.fleet.router_service.ROUTER_ENV (kept import-free)


def ray_address() -> str | None:
    """``RAY_ADDRESS`` (Ray's own variable), the cluster the Ray executor and doctor use
    when no ``--address`` is given."""
    return read_env("RAY_ADDRESS")


def import_ray() -> Any:
    """``ray``, or a one-line bad-input error naming the extra that provides it."""
    try:
        import ray
    except ImportError:
        raise UserError(
            "the ray executor needs Ray, which is not installed",
            field="--executor",
            fix=EXTRA_HINT,
        ) from None
    return ray


def connect(ray: Any, address: str | None, runtime_env: dict[str, Any] | None = None) -> None:
    """Join the cluster at ``address`` (host:port of the head, or ray://host:port);
    ``runtime_env`` applies to every task of this driver (the shipped project)."""
    if ray.is_initialized():
        return
    if address and "://" not in address:
        _check_reachable(address)
    kwargs: dict[str, Any] = {"address": address, "log_to_driver": False}
    kwargs["logging_level"] = "ERROR"
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
        # Ray warns, once per driver, that it no longer ships .git: harness never did
        logging.getLogger("ray._private.runtime_env").setLevel(logging.ERROR)
    try:
        ray.init(**kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise InfraError(
            f"cannot join the Ray cluster at {address}: {str(exc).splitlines()[0][:200]}",
            fix="start it (`ray start --head`), or pass --address HOST:PORT of its head",
        ) from None


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail fast when nothing listens at the head's address (``ray.init`` would retry
    for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(
            f"'{address}' is not HOST:PORT", field="--address", fix="e.g. --address 10.0.0.5:6379"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise InfraError(
            f"no Ray head answers at {address}: {exc}",
            fix="start it (`ray start --head --port PORT`), or pass the right --address",
        ) from None


def docker_slots(ray: Any) -> tuple[int, float]:
    """(alive nodes, ``docker`` slots over them)."""
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    return len(nodes), sum(float(n.get("Resources", {}).get(RESOURCE, 0)) for n in nodes)


class RayExecutor:
    """Trials as Ray tasks; see the module docstring."""

    name = "ray"

    def __init__(
        self, settings: Settings, address: str | None = None, router_host: str | None = None
    ) -> None:
        self.settings = settings
        self.address = address or ray_address()
        self._router_host = router_host
        self._ray: Any = import_ray()  # fail early, before the job writes anything
        if not self.address:
            raise UserError(
                "the ray executor needs a cluster address",
                field="--address",
                fix="pass --address HOST:PORT of the head (or set RAY_ADDRESS)",
            )
        if "://" not in self.address:
            _check_reachable(self.address)
        self._task: Any = None
        self._slots = 0
        self._lock = threading.Lock()
        self._stopped = False
        self._live: dict[str, Any] = {}

    def __enter__(self) -> RayExecutor:
        ray = self._ray
        data = settings_to_json(self.settings)
        runtime_env = {"working_dir": data["project_root"], "excludes": _excludes(data)}
        connect(ray, self.address, runtime_env)
        nodes, slots = docker_slots(ray)
        if slots <= 0:
            ray.shutdown()
            raise InfraError(
                f"the Ray cluster at {self.address} has {nodes} node(s), none with a "
                f"'{RESOURCE}' resource",
                fix="start nodes with: ray start --address HEAD:PORT --resources '{\"docker\": 1}'",
            )
        self._slots = int(slots)
        self._task = ray.remote(run_on_node)
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self._ray.shutdown()

    def slots(self) -> int | None:
        """Every ``docker`` slot of the cluster when the job started."""
        return self._slots or None

    def router_host(self) -> str | None:
        """``--router-host``, else this machine's address in the cluster (the nodes'
        trial gateways must reach the router there)."""
        if self._router_host:
            return self._router_host
        with contextlib.suppress(Exception):
            return str(self._ray.util.get_node_ip_address())
        return None

    def run(self, spec: dict[str, Any], files: TrialFiles) -> dict[str, Any] | None:
        try:
            return self._run(spec, files)
        except BaseException as exc:  # never leave the trial "running"
            _log(files.log, f"ray: {spec['key']}: {type(exc).__name__}: {exc}")
            if self._stopped or not isinstance(exc, Exception):
                return None
            return _infra(f"ray executor: {type(exc).__name__}: {exc}")

    def _run(self, spec: dict[str, Any], files: TrialFiles) -> dict[str, Any] | None:
        ray = self._ray
        results = Path(spec["settings"]["results"])
        task_spec = {**spec, "env": _trial_env(spec["settings"])}
        key = str(spec["key"])
        with self._lock:
            if self._stopped:
                return None
            ref = self._task.options(
                num_cpus=0,
                resources={RESOURCE: 1},
                max_retries=0,  # the runner retries, counting interruptions
                retry_exceptions=False,
            ).remote(task_spec)
            self._live[key] = ref
        started = time.monotonic()
        try:
            out = self._wait(ref)
        except ray.exceptions.TaskCancelledError:
            out = None
        except ray.exceptions.RayTaskError as exc:  # a harness bug on the node
            cause = exc.cause if getattr(exc, "cause", None) is not None else exc
            out = _infra(f"trial task failed on its node: {type(cause).__name__}: {cause}")
        except ray.exceptions.RayError as exc:  # node or worker lost, object lost
            first = str(exc).splitlines()[0] if str(exc) else ""
            out = _infra(f"infrastructure interruption: {type(exc).__name__}: {first[:300]}")
        finally:
            with self._lock:
                self._live.pop(key, None)
        if out is None or (self._stopped and out.get("outcome") == "error"):
            _log(files.log, f"ray: {key}: no result (stopped)")
            return None
        archive = out.pop("archive", None)
        if archive is not None and out.get("run_rel"):
            out["run_dir"] = str(unpack_run(archive, results, str(out.pop("run_rel"))))
        took = time.monotonic() - started
        where = out.pop("node", "?")
        if out.get("log"):
            _log(files.log, str(out.pop("log")).rstrip("\n"))
        _log(
            files.log,
            f"ray: {key} on node {where}: {out.get('status')} {out.get('outcome')} "
            f"in {took:.1f}s {out.get('detail') or ''}".rstrip(),
        )
        return out

    def _wait(self, ref: Any) -> dict[str, Any] | None:
        """The task's answer; after ``stop`` it gets ``GRACE_S`` to clean up, then is killed."""
        ray = self._ray
        stopped_at: float | None = None
        while True:
            ready, _ = ray.wait([ref], timeout=POLL_S)
            if ready:
                value = ray.get(ref)
                return value if isinstance(value, dict) else None
            if self._stopped:
                stopped_at = stopped_at or time.monotonic()
                if time.monotonic() - stopped_at > GRACE_S:
                    with contextlib.suppress(Exception):
                        ray.cancel(ref, force=True)
                    return None

    def stop(self) -> None:
        """Cancel every task in flight (a KeyboardInterrupt in the trial: its ``finally``
        blocks remove its containers); ``run`` force-kills what outlives ``GRACE_S``."""
        with self._lock:
            self._stopped = True
            refs = list(self._live.values())
        for ref in refs:
            with contextlib.suppress(Exception):
                self._ray.cancel(ref, force=False)


def _infra(detail: str) -> dict[str, Any]:
    return {"status": "error", "outcome": "error", "detail": detail}


def _log(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")


def _excludes(settings: dict[str, Any]) -> list[str]:
    """``SHIP_EXCLUDES`` plus the settings' output folders that lie inside the project."""
    root = Path(settings["project_root"])
    out = list(SHIP_EXCLUDES)
    for key in ("results", "workspace", "jobs"):
        value = settings.get(key)
        if value and Path(value).is_relative_to(root) and Path(value) != root:
            out.append("/" + Path(value).relative_to(root).as_posix())
    return out


def _trial_env(settings: dict[str, Any]) -> dict[str, str]:
    """Environment the trial needs on its node: the job's shared router (the fleet file
    travels in the settings)."""
    env: dict[str, str] = {}
    router = read_env(ROUTER_ENV)
    if router:
        env[ROUTER_ENV] = router
    return env


# -- on the node -------------------------------------------------------------------------


def localise(settings: dict[str, Any], driver_root: Path, node_root: Path) -> dict[str, Any]:
    """The driver's settings with every path inside its project moved to ``node_root``
    (where Ray unpacked the project). Paths outside the project are kept: they must exist
    at the same place on every node (a shared scenario root or repository cache)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if isinstance(value, str) and value.startswith("/"):
            path = Path(value)
            if path == driver_root or path.is_relative_to(driver_root):
                value = str(node_root / path.relative_to(driver_root))
        out[key] = value
    return out


def run_on_node(spec: dict[str, Any]) -> dict[str, Any]:
    """The Ray task: run one trial in a scratch folder of this node, in a worker process
    of its own (as the local executor does: no state shared between trials, and the
    worker stops itself, removing its containers, if this Ray worker dies). Returns the
    worker's answer, its log (``log``) and the result folder packed (``archive``, at
    ``run_rel`` relative to the results)."""
    scratch = Path(tempfile.mkdtemp(prefix="harness-trial-"))
    node_root = Path.cwd()  # where Ray unpacked the project
    try:
        driver_root = Path(spec["settings"]["project_root"])
        settings = localise(spec["settings"], driver_root, node_root)
        settings["results"] = str(scratch / "results")
        settings["workspace"] = str(scratch / "workspace")
        if settings.get("jobs"):
            settings["jobs"] = str(scratch / "jobs")
        env = localise(dict(spec.get("env", {})), driver_root, node_root)
        python_path = [str(node_root), *filter(None, [read_env("PYTHONPATH")])]
        files = TrialFiles(scratch / "spec.json", scratch / "out.json", scratch / "trial.log")
        worker_spec = {
            **spec,
            "settings": settings,
            "lock": str(scratch / "trial.lock"),
            "parent": os.getpid(),
            "scratch": str(scratch),  # removed by the worker if this task is killed
        }
        out = LocalExecutor(node_root).run(
            worker_spec,
            files,
            env={**os.environ, **env, "PYTHONPATH": os.pathsep.join(python_path)},
        ) or _infra("the trial's worker process died without a word")
        out["node"] = _node_name()
        with contextlib.suppress(OSError):
            out["log"] = files.log.read_text(encoding="utf-8", errors="replace")[-200_000:]
        run_dir = out.get("run_dir")
        if run_dir and Path(run_dir).is_dir():
            out["run_rel"] = Path(run_dir).relative_to(scratch / "results").as_posix()
            out["archive"] = pack_run(Path(run_dir))
            out.pop("run_dir")
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _node_name() -> str:
    with contextlib.suppress(Exception):
        import ray

        ctx = ray.get_runtime_context()
        ip = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        return f"{ip}/{ctx.get_node_id()[:8]}"
    return "?"


def pack_run(run_dir: Path) -> bytes:
    """The result folder as a gzipped tar (paths relative to the folder)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(run_dir, arcname=".")
    return buf.getvalue()


def unpack_run(archive: bytes, results: Path, run_rel: str) -> Path:
    """Place a packed result folder at ``results/run_rel``: unpacked beside it, then
    renamed into place, so a reader (or a killed driver) never sees half a run."""
    rel = Path(run_rel)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise InfraError(f"refusing a result folder outside the results: {run_rel}")
    dest = results / rel
    if dest.exists():
        raise InfraError(f"result folder already exists: {dest}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".partial", dir=dest.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(partial, filter="data")
        partial.chmod(0o755)
        os.rename(partial, dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return dest


def cluster_report(address: str | None) -> tuple[bool, str, str]:
    """For ``harness doctor``: (fine, one line, fix) about the cluster at ``address``."""
    try:
        ray = import_ray()
    except UserError:
        return False, "ray is not installed", EXTRA_HINT
    try:
        connect(ray, address)
    except InfraError as exc:
        return False, exc.message[:160], "ray start --head (on the head machine)"
    try:
        nodes, slots = docker_slots(ray)
        version = ray.__version__
    finally:
        ray.shutdown()
    detail = f"{address}: ray {version}, {nodes} node(s) alive, {slots:g} '{RESOURCE}' slot(s)"
    if slots > 0:
        return True, detail, ""
    return False, detail, "ray start --address HEAD:PORT --resources '{\"docker\": 1}'"
