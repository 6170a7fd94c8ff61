"""Accounting: one telemetry line per attempt (built in one place), energy shared among a
host's calls, the recording of request/response pairs, and each trial's budget."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.config.budget import Budget
from harness.fleet import wire
from harness.fleet.cassette import Recorder
from harness.fleet.config import Price
from harness.fleet.lease import Outcome, Routing
from harness.fleet.telemetry import EnergyMeter, TelemetrySink, energy_kwh, rates, token_cost
from harness.gateway.calls import Attempt, Call, rnd
from harness.gateway.transcript import Transcript, reply_of

STREAM_BROKEN = "stream_broken"  # the host accepted the call, then its stream broke


@dataclass
class Spent:
    """What one trial has used: the numbers its budget is checked against."""

    tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    open: set[str] = field(default_factory=set)  # calls admitted, their answer not ended
    refused: str | None = None  # the limit of the first call refused for the budget

    def to_json(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "cost_usd": round(self.cost_usd, 9), "calls": self.calls}


class Accounting:
    def __init__(
        self,
        *,
        telemetry: TelemetrySink,
        routing: Routing,
        price_for: Callable[[str | None, str | None], Price | None],
        kwh_price: float,
        watts: dict[str, float | None],
        artefact: Callable[[str, str], str | None],
        recorder: Recorder | None = None,
        budget: Budget | None = None,
        transcript: Transcript | None = None,
    ) -> None:
        self.telemetry = telemetry
        self.routing = routing
        self.price_for = price_for
        self.kwh_price = kwh_price
        self.watts = watts
        self.artefact = artefact
        self.recorder = recorder
        self.transcript = transcript  # the conversation per call (harness view, the board)
        self.budget = budget if budget is not None and not budget.unlimited else None
        self.energy = {h: EnergyMeter() for h in watts}
        self.spent: dict[str | None, Spent] = {}
        self.faults: dict[str | None, str] = {}  # trial -> the first harness fault it met
        self.refusals: dict[str | None, str] = {}  # trial -> its first request not served
        self.running: dict[int, Attempt] = {}  # attempts started and not finished, by id

    # ---- the one row builder --------------------------------------------------------------
    def row(self, call: Call, **fields: Any) -> dict[str, Any]:
        """A telemetry line for ``call``: who and what, then ``fields`` (what happened)."""
        return {
            "ts": round(time.time(), 6),
            "call": call.call_id,
            "trial": call.key.trial,
            "agent": call.key.agent,
            "model": call.model,
            "requested_model": call.requested,
            "endpoint": call.endpoint,
            "stream": call.stream,
            "host": None,
            "upstream": None,
            "artefact": None,
            "retry": 0,
            "incomplete": False,
            **fields,
        }

    def write(self, line: dict[str, Any]) -> None:
        self.telemetry.write(line)
        if line.get("status") != "budget":
            spent = self._spent(line.get("trial"))
            spent.tokens += int(line.get("prompt_tokens") or 0) + int(
                line.get("completion_tokens") or 0
            )
            spent.cost_usd += float(line.get("cost_usd") or 0.0)

    # ---- attempts on hosts ----------------------------------------------------------------
    def start(self, att: Attempt) -> None:
        self.energy[att.host].start(id(att), time.monotonic())
        self.running[id(att)] = att

    def cut_running(self, why: str) -> None:
        """Finish every attempt still running as cut (``incomplete``), written with what
        is known of it: the gateway is ending (the trial's turn is over) and its record
        must hold every call a host worked on."""
        for att in list(self.running.values()):
            att.status = att.status or "cut"
            att.error = att.error or why
            att.incomplete = True
            self.finish(att)

    def finish(
        self, att: Attempt, *, failed: bool = False, retry_after: float | None = None
    ) -> None:
        """End an attempt once: release the host (cooling it if it ``failed``), write the line."""
        lease, att.token = att.token, None
        self.running.pop(id(att), None)
        if lease is None:
            return  # already finished
        now = time.monotonic()
        total = now - att.t0
        busy = self.energy[att.host].stop(id(att), now)
        estimated = (
            att.usage is None
            and att.output_chunks > 0
            and (att.status == STREAM_BROKEN or (att.call.stream and att.status == 200))
        )
        if att.usage and not estimated:  # the host's own counts, kept beside the gateway's
            att.engine_usage = {
                k: int(v)
                for k, v in att.usage.items()
                if isinstance(v, int | float) and not isinstance(v, bool)
            }
        if estimated:
            # the host produced tokens (and relayed them) but no usage chunk came: the
            # stream broke, or the host ignores ``stream_options.include_usage`` (e.g.
            # llama-cpp-python's server): count them, estimated, never charge nothing
            att.usage = {
                "prompt_tokens": att.call.job.prompt_tokens,
                "completion_tokens": att.output_chunks,
            }
        prompt, cached, completion = wire.usage_numbers(att.usage)
        ttft = att.ttft_s if att.ttft_s is not None else att.first_chunk_s
        prefill, decode = rates(prompt, cached, completion, ttft, total)
        ok = att.status == 200 and not att.incomplete
        self.routing.release(
            lease,
            Outcome(
                ok=ok,
                trial=att.call.key.trial,
                prompt=prompt,
                cached=cached,
                completion=completion,
                ttft_s=ttft,
                total_s=total,
                failed=failed,
                retry_after=retry_after,
            ),
        )
        kwh = energy_kwh(busy, self.watts.get(att.host))
        tcost = token_cost(self.price_for(att.call.model, att.upstream), prompt, cached, completion)
        ecost = kwh * self.kwh_price
        line = self.row(
            att.call,
            ts=round(att.ts, 6),
            host=att.host,
            upstream=att.upstream,
            artefact=self.artefact(att.host, att.upstream),
            prompt_tokens=prompt,
            cached_tokens=cached,
            completion_tokens=completion,
            ttft_s=rnd(ttft),
            # who measured ttft_s: the gateway on a stream, the host in its reply, or no one
            ttft_from=None if ttft is None else ("host" if att.ttft_reported else "gateway"),
            total_s=rnd(total),
            prefill_tps=rnd(prefill, 1),
            decode_tps=rnd(decode, 1),
            status=att.status,
            error=att.error,
            incomplete=att.incomplete,
            retry=att.retry,
            busy_s=rnd(busy),
            energy_kwh=round(kwh, 9),
            token_cost_usd=round(tcost, 9),
            energy_cost_usd=round(ecost, 9),
            cost_usd=round(tcost + ecost, 9),
        )
        if estimated:
            line["usage_estimated"] = True
        if att.engine_usage:
            line["engine_usage"] = att.engine_usage
        if att.timings:  # the engine's own clock: prefill/decode times, prompt cache reuse
            line["engine_timings"] = att.timings
        self.write(line)

    # ---- replayed and refused calls -------------------------------------------------------
    def replayed(
        self,
        call: Call,
        t0: float,
        ts: float,
        status: int,
        usage: dict[str, Any] | None = None,
        index: int | None = None,
        error: str | None = None,
    ) -> None:
        line = self.row(call, ts=round(ts, 6), host="replay", status=status)
        if error is not None:
            line.update(error=error, total_s=rnd(time.monotonic() - t0))
            self.write(line)
            return
        prompt, cached, completion = wire.usage_numbers(usage)
        tcost = token_cost(self.price_for(call.model, None), prompt, cached, completion)
        line.update(
            prompt_tokens=prompt,
            cached_tokens=cached,
            completion_tokens=completion,
            ttft_s=0.0,
            total_s=rnd(time.monotonic() - t0),
            cassette_index=index,
            token_cost_usd=round(tcost, 9),
            cost_usd=round(tcost, 9),
            energy_kwh=0.0,
        )
        self.write(line)

    # ---- budgets --------------------------------------------------------------------------
    def admit(self, call: Call) -> str | None:
        """Count the call against its trial's budget; the limit reached if it is refused."""
        spent = self._spent(call.key.trial)
        if self.budget is not None:
            hit = self.budget.exceeded(spent.tokens, spent.cost_usd, spent.calls)
            if hit is not None:
                self.write(
                    self.row(
                        call,
                        status="budget",
                        error=f"budget exhausted: {hit}",
                        prompt_tokens=0,
                        cached_tokens=0,
                        completion_tokens=0,
                        cost_usd=0.0,
                    )
                )
                spent.refused = spent.refused or hit
                return hit
        spent.calls += 1
        spent.open.add(call.call_id)
        return None

    def close(self, call: Call) -> None:
        """The answer to an admitted call has ended (however it ended)."""
        self._spent(call.key.trial).open.discard(call.call_id)

    def _spent(self, trial: str | None) -> Spent:
        spent = self.spent.get(trial)
        if spent is None:
            spent = self.spent[trial] = Spent()
        return spent

    def exhausted(self, spent: Spent) -> str | None:
        """The limit that ends the trial's agent: a limit reached (or a call refused for
        it), once every call the budget admitted has been answered: a call it let through
        is never cut off by the agent's stop."""
        hit = spent.refused or (self.budget or Budget()).exceeded(
            spent.tokens, spent.cost_usd, spent.calls
        )
        return hit if not spent.open else None

    def budget_state(self, trial: str | None) -> dict[str, Any]:
        """``GET /v1/harness/budget``: the limit reached (if any), usage and limits, and
        the harness fault that makes further calls pointless (``fault``, None if none)."""
        spent = self.spent.get(trial) or Spent()
        budget = self.budget or Budget()
        return {
            "exhausted": self.exhausted(spent),
            "used": spent.to_json(),
            "limit": {"tokens": budget.tokens, "cost_usd": budget.cost_usd, "calls": budget.calls},
            "fault": self.faults.get(trial),
            "refused": self.refusals.get(trial),
        }

    # ---- harness faults -------------------------------------------------------------------
    def fault(self, trial: str | None, reason: str) -> None:
        """Record that a trial cannot go on for the harness's sake (a cassette that
        does not match, a fleet that cannot be reached, a model nobody serves): the trial
        reads it from the budget endpoint and stops the agent as ``error``. The first
        fault of a trial is kept, on one line."""
        line = " ".join(reason.split())
        self.faults.setdefault(trial, line[:400])

    def refuse(self, trial: str | None, reason: str) -> None:
        """Record a request the agent chose that cannot be served (a model it named that
        the fleet does not serve, a call its cassette does not hold): the agent's, not
        the harness's. The agent gets the error reply and goes on or stops as it will;
        the trial is graded on its work (never ``error``). The first is kept."""
        line = " ".join(reason.split())
        self.refusals.setdefault(trial, line[:400])

    # ---- recording ------------------------------------------------------------------------
    def record(
        self, call: Call, response: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> None:
        if "raw" in response and not call.endpoint.endswith("/embeddings"):  # as it came
            self.transcribe(call, {"raw": response["raw"]})
        elif "events" in response:
            self.transcribe(call, {"events": len(response["events"])})
        if self.recorder is not None:
            self.recorder.add(
                call.endpoint,
                call.body,
                response,
                meta or {"stream": call.stream},
                agent=call.key.agent,
            )

    def transcribe(
        self, call: Call, reply: dict[str, Any] | None = None, error: str | None = None
    ) -> None:
        """One line of the trial's transcript (see ``transcript.py``)."""
        if self.transcript is not None:
            self.transcript.add(
                call.call_id, call.key.trial, call.endpoint, call.body, reply, error
            )

    def record_reply(
        self, call: Call, acc: wire.ChunkAccumulator | None, body: dict[str, Any] | None
    ) -> None:
        """A chat/text reply as a cassette response: message (or text), finish, usage;
        and the transcript's line for it."""
        if self.recorder is None and self.transcript is None:
            return
        if body is None:
            body = acc.body(call.kind, call.requested or None) if acc is not None else {}
        self.transcribe(call, reply_of(body))
        if self.recorder is None:
            return
        choice = (body.get("choices") or [{}])[0]
        resp: dict[str, Any] = {"finish_reason": choice.get("finish_reason")}
        if call.kind == "chat":
            resp["message"] = {
                k: v
                for k, v in (choice.get("message") or {}).items()
                if k != "role" and v is not None
            }
        else:
            resp["text"] = choice.get("text", "")
        if body.get("usage"):
            resp["usage"] = body["usage"]
        self.record(call, resp)
