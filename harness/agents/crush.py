"""crush (Charm's agent CLI, npm ``@charmland/crush``): ``crush run`` once, non-interactive.

The npm package is only a launcher whose install script downloads a release binary from a
host this machine cannot reach, so there is no ``images/agent-crush`` and ``version()``
says so. The command and configuration are complete and unit-tested: one ``openai-compat``
provider whose base URL is the gateway and whose key is read from ``HARNESS_API_KEY``,
permissions skipped (``--yolo``; the container is the sandbox), provider-list updates and
metrics off, its config and data outside the workspace.
"""

from __future__ import annotations

import json
from typing import Any

from harness.agents.common import (
    AGENT_DIR,
    Invocation,
    UnshippedCliAgent,
    base_env,
)

NAME = "crush"
IMAGE = "agent-crush"
CONFIG = f"{AGENT_DIR}/crush/crush.json"
DATA = f"{AGENT_DIR}/crush/data"
PROVIDER = "harness"
CONTEXT_WINDOW = 32768
MAX_TOKENS = 8192


def config(gateway_url: str, model_id: str) -> dict[str, Any]:
    """``crush.json``: the gateway as the only provider; both model slots on the entrant."""
    model = {"model": model_id, "provider": PROVIDER, "max_tokens": MAX_TOKENS}
    return {
        "providers": {
            PROVIDER: {
                "name": "harness gateway",
                "type": "openai-compat",
                "base_url": gateway_url,
                "api_key": "$HARNESS_API_KEY",
                "models": [
                    {
                        "id": model_id,
                        "name": model_id,
                        "context_window": CONTEXT_WINDOW,
                        "default_max_tokens": MAX_TOKENS,
                    }
                ],
            }
        },
        "models": {"large": model, "small": model},
        "options": {
            "data_directory": DATA,
            "disable_provider_auto_update": True,
            "disable_metrics": True,
            "attribution": {"co_authored_by": False, "generated_with": False},
        },
        "permissions": {"allowed_tools": []},
    }


def invocation(gateway_url: str, api_key: str, model_id: str, task: str) -> Invocation:
    """The ``crush run`` command line, environment and config for one run."""
    argv = ["crush", "run", "--yolo", "--quiet", task]
    env = {
        **base_env(api_key),
        "CRUSH_GLOBAL_CONFIG": f"{AGENT_DIR}/crush",
        "CRUSH_GLOBAL_DATA": DATA,
        "CRUSH_DISABLE_PROVIDER_AUTO_UPDATE": "1",
        "CRUSH_DISABLE_METRICS": "1",
    }
    return Invocation(
        argv=argv,
        env=env,
        files={CONFIG: json.dumps(config(gateway_url, model_id), indent=2) + "\n"},
        transcripts={DATA: "crush-data"},
    )


class CrushAgent(UnshippedCliAgent):
    """Adapter for crush; needs an ``images/agent-crush`` that can install it."""

    name = NAME
    image_name = IMAGE
    version_argv = ["crush", "--version"]
    why = "its npm package downloads a release binary from a host this machine cannot reach"
    invocation = staticmethod(invocation)
