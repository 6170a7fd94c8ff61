"""goose (Block's agent CLI): ``goose run`` once on an instructions file.

goose is published only as prebuilt release binaries, not on a package registry harness
can install from, so there is no ``images/agent-goose`` yet and ``version()`` says so.
The command and configuration are complete and unit-tested: goose's ``openai`` provider
is pointed at the gateway (``OPENAI_HOST`` + ``OPENAI_BASE_PATH``), runs in ``auto`` mode
(no approvals) with the built-in ``developer`` extension, with the keyring and telemetry
off, and keeps its sessions outside the workspace.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from harness.agents.common import (
    AGENT_DIR,
    AGENT_HOME,
    Invocation,
    UnshippedCliAgent,
    base_env,
)

NAME = "goose"
IMAGE = "agent-goose"
TASK = f"{AGENT_DIR}/task.md"
CONFIG = f"{AGENT_HOME}/.config/goose/config.yaml"
SESSIONS = f"{AGENT_HOME}/.local/share/goose/sessions"


def split_gateway(gateway_url: str) -> tuple[str, str]:
    """``http://gw:8080/v1`` -> (``http://gw:8080``, ``v1/chat/completions``)."""
    parts = urlsplit(gateway_url)
    path = parts.path.strip("/")
    return f"{parts.scheme}://{parts.netloc}", "/".join(p for p in (path, "chat/completions") if p)


def config_yaml(gateway_url: str, model_id: str) -> str:
    """goose's ``config.yaml`` (JSON is valid YAML): provider, model, mode, extension."""
    host, base_path = split_gateway(gateway_url)
    data = {
        "GOOSE_PROVIDER": "openai",
        "GOOSE_MODEL": model_id,
        "OPENAI_HOST": host,
        "OPENAI_BASE_PATH": base_path,
        "GOOSE_MODE": "auto",
        "GOOSE_TELEMETRY_ENABLED": False,
        "extensions": {
            "developer": {
                "enabled": True,
                "type": "builtin",
                "name": "developer",
                "bundled": True,
                "timeout": 300,
            }
        },
    }
    return json.dumps(data, indent=2) + "\n"


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``goose run`` command line, environment and config for one run."""
    host, base_path = split_gateway(gateway_url)
    argv = ["goose", "run", "--name", "harness-trial", "--instructions", TASK]
    env = {
        **base_env(api_key),
        "OPENAI_API_KEY": api_key,
        "OPENAI_HOST": host,
        "OPENAI_BASE_PATH": base_path,
        "GOOSE_PROVIDER": "openai",
        "GOOSE_MODEL": model_id,
        "GOOSE_MODE": "auto",
        "GOOSE_DISABLE_KEYRING": "1",
        "GOOSE_TELEMETRY_ENABLED": "false",
        "GOOSE_CLI_MIN_PRIORITY": "0.2",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={TASK: task, CONFIG: config_yaml(gateway_url, model_id)},
        transcripts={SESSIONS: "goose-sessions"},
    )


class GooseAgent(UnshippedCliAgent):
    """Adapter for goose; needs an ``images/agent-goose`` that can install it."""

    name = NAME
    image_name = IMAGE
    version_argv = ["goose", "--version"]
    why = "it is not published on a package registry"
    invocation = staticmethod(invocation)
