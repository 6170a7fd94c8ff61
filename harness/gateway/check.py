"""``harness fleet check``: which agent can talk to which model, before a matrix spends hours.

Each model of the fleet is asked, through a gateway in this process (as agents reach it),
the calls each agent's protocol makes: chat completions with tools, streamed with usage,
the Responses API, Anthropic Messages, and a long prompt of the size the agent sends. A
probe ``works``, is ``degraded`` (answered, but not as the agent needs: tools returned as
plain text, no usage in a stream) or ``fails`` (an error: unknown route, context
exceeded). A pair's verdict is its agent's worst probe, with the reasons.

The verdicts are kept in ``<project>/.harness/fleet-check.json``; ``harness run`` and
``exec`` refuse a pair found to fail (``--allow-failing-pairs`` runs it anyway).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from harness.errors import UserError
from harness.fleet.config import FleetConfig
from harness.util.fs import write_json

WORKS, DEGRADED, FAILS = "works", "degraded", "fails"
RANK = {WORKS: 0, DEGRADED: 1, FAILS: 2}
CHECK_FILE = Path(".harness") / "fleet-check.json"

# what each agent's protocol needs of a model (harness/agents/: how each one calls)
AGENT_NEEDS: dict[str, tuple[str, ...]] = {
    "mini-swe-agent": ("chat_tools",),
    "aider": ("chat_stream",),
    "codex": ("responses_tools",),
    "opencode": ("chat_stream_tools",),
    "claude-code": ("messages_tools", "long_16k"),
    "qwen-code": ("chat_stream_tools", "long_12k"),
    "openhands": ("chat_tools", "long_8k"),
}
LONG = {"long_8k": 8_000, "long_12k": 12_000, "long_16k": 16_000}  # prompt tokens, about
BASH = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "the command to run"}},
    "required": ["command"],
}
ASK = "Use the bash tool to run this command: ls"
SYSTEM = "You are a coding agent. You act only by calling the bash tool."


@dataclass(frozen=True)
class Probe:
    """What one call showed: works / degraded / fails, and why."""

    level: str
    reason: str
    seconds: float = 0.0


@dataclass(frozen=True)
class PairVerdict:
    agent: str
    model: str
    level: str
    reasons: list[str]


Post = Callable[[str, dict[str, Any], bool], httpx.Response]


def _error(resp: httpx.Response) -> Probe:
    text = resp.text.strip().replace("\n", " ")
    try:
        err = resp.json().get("error")
        text = str(err.get("message") if isinstance(err, dict) else err or text)
    except (ValueError, AttributeError):
        pass
    return Probe(FAILS, f"HTTP {resp.status_code}: {text[:160]}")


def _sse(resp: httpx.Response) -> list[dict[str, Any]]:
    events = []
    for line in resp.text.splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            try:
                events.append(json.loads(line[5:]))
            except ValueError:
                continue
    return events


def probe_chat_tools(post: Post, model: str) -> Probe:
    body = {
        "model": model,
        "max_tokens": 48,
        "temperature": 0,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ASK}],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": BASH}}],
    }
    resp = post("/v1/chat/completions", body, False)
    if resp.status_code != 200:
        return _error(resp)
    message = (resp.json().get("choices") or [{}])[0].get("message") or {}
    if message.get("tool_calls"):
        return Probe(WORKS, "tool calls")
    return Probe(DEGRADED, "answered with tools in plain text, no tool_calls")


def probe_chat_stream(post: Post, model: str, tools: bool = False) -> Probe:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": 48 if tools else 8,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ASK}],
    }
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": "bash", "parameters": BASH}}]
    resp = post("/v1/chat/completions", body, True)
    if resp.status_code != 200:
        return _error(resp)
    events = _sse(resp)
    deltas = [c["choices"][0].get("delta") or {} for c in events if c.get("choices")]
    if not deltas:
        return Probe(FAILS, "a stream with no chunks")
    if not any(c.get("usage") for c in events):
        return Probe(DEGRADED, "streams without usage (the gateway estimates tokens)")
    if tools and not any(d.get("tool_calls") for d in deltas):
        return Probe(DEGRADED, "streamed with tools in plain text, no tool_calls")
    return Probe(WORKS, "streamed tool calls with usage" if tools else "streamed with usage")


def probe_responses_tools(post: Post, model: str) -> Probe:
    body = {
        "model": model,
        "max_output_tokens": 48,
        "instructions": SYSTEM,
        "input": ASK,
        "tools": [{"type": "function", "name": "bash", "parameters": BASH}],
    }
    resp = post("/v1/responses", body, False)
    if resp.status_code != 200:
        return _error(resp)
    kinds = [item.get("type") for item in resp.json().get("output") or []]
    if "function_call" in kinds:
        return Probe(WORKS, "Responses API with function calls")
    return Probe(DEGRADED, "Responses API answered with tools in plain text")


def probe_messages_tools(post: Post, model: str) -> Probe:
    body = {
        "model": model,
        "max_tokens": 48,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": ASK}],
        "tools": [{"name": "bash", "input_schema": BASH}],
    }
    resp = post("/v1/messages", body, False)
    if resp.status_code != 200:
        return _error(resp)
    kinds = [block.get("type") for block in resp.json().get("content") or []]
    if "tool_use" in kinds:
        return Probe(WORKS, "Messages API with tool use")
    return Probe(DEGRADED, "Messages API answered with tools in plain text")


def probe_long(post: Post, model: str, tokens: int) -> Probe:
    words = " ".join(f"line{i % 97}" for i in range(tokens // 3))  # ~3 tokens a word
    body = {
        "model": model,
        "max_tokens": 1,
        "messages": [{"role": "user", "content": f"{words}\nSay ok."}],
    }
    resp = post("/v1/chat/completions", body, False)
    if resp.status_code != 200:
        failed = _error(resp)
        return Probe(FAILS, f"a ~{tokens:,}-token prompt: {failed.reason}")
    got = (resp.json().get("usage") or {}).get("prompt_tokens")
    return Probe(WORKS, f"a {got or tokens:,}-token prompt")


def run_probe(name: str, post: Post, model: str) -> Probe:
    started = time.monotonic()
    try:
        if name == "chat_tools":
            found = probe_chat_tools(post, model)
        elif name == "chat_stream":
            found = probe_chat_stream(post, model)
        elif name == "chat_stream_tools":
            found = probe_chat_stream(post, model, tools=True)
        elif name == "responses_tools":
            found = probe_responses_tools(post, model)
        elif name == "messages_tools":
            found = probe_messages_tools(post, model)
        else:
            found = probe_long(post, model, LONG[name])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, AttributeError) as exc:
        found = Probe(FAILS, f"{type(exc).__name__}: {str(exc)[:160]}")
    return Probe(found.level, found.reason, round(time.monotonic() - started, 3))


def verdicts(
    agents: Iterable[str], models: Iterable[str], probes: dict[tuple[str, str], Probe]
) -> list[PairVerdict]:
    """Each pair's worst probe among its agent's needs, with the reasons of the others."""
    out = []
    for model in models:
        for agent in agents:
            needed = [(n, probes[(model, n)]) for n in AGENT_NEEDS[agent]]
            level = max((p.level for _, p in needed), key=RANK.__getitem__)
            reasons = [f"{n}: {p.reason}" for n, p in needed if p.level != WORKS]
            out.append(PairVerdict(agent, model, level, reasons))
    return out


def check_fleet(
    fleet: FleetConfig, agents: list[str], models: list[str] | None = None
) -> dict[str, Any]:
    """Probe each model (all the fleet's by default) for what ``agents`` need."""
    from harness.gateway.server import GatewayServer

    unknown = [a for a in agents if a not in AGENT_NEEDS]
    if unknown:
        raise UserError(
            f"no protocol known for agent(s) {', '.join(unknown)}",
            field="--agents",
            fix=f"use some of: {', '.join(AGENT_NEEDS)}",
        )
    names = models or list(fleet.models)
    needed = sorted({n for a in agents for n in AGENT_NEEDS[a]})
    probes: dict[tuple[str, str], Probe] = {}
    with GatewayServer(fleet, require_keys=True) as gw:
        key = gw.issue_key("fleet-check", "fleet-check")
        with httpx.Client(timeout=300) as client:

            def post(path: str, body: dict[str, Any], _stream: bool) -> httpx.Response:
                url = gw.base_url.removesuffix("/v1") + path
                return client.post(url, json=body, headers={"Authorization": f"Bearer {key}"})

            for model in names:
                for name in needed:
                    probes[(model, name)] = run_probe(name, post, model)
    return {
        "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "probes": {f"{m} {n}": asdict(p) for (m, n), p in sorted(probes.items())},
        "pairs": [asdict(v) for v in verdicts(agents, names, probes)],
    }


def save_check(path: Path, result: dict[str, Any]) -> Path:
    """Merge ``result`` into the stored verdicts (a later check of a pair replaces it)."""
    old = load_check(path)
    pairs = {(p["agent"], p["model"]): p for p in old.get("pairs", [])}
    pairs.update({(p["agent"], p["model"]): p for p in result["pairs"]})
    write_json(path, {**result, "pairs": list(pairs.values())})
    return path


def load_check(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def known_failing(path: Path, agent: str, model: str) -> PairVerdict | None:
    """The stored verdict of (agent, model) when it is ``fails``, else None."""
    for pair in load_check(path).get("pairs", []):
        if pair.get("agent") == agent and pair.get("model") == model and pair["level"] == FAILS:
            return PairVerdict(agent, model, FAILS, list(pair.get("reasons", [])))
    return None
