"""A trial's spending limits: the contract between the scenario, the job and the gateway.

The scenario's ``budget:`` block (or ``harness run --budget-*``) sets them; the gateway
refuses calls once any limit is reached and reports that in telemetry (``status:
"budget"``) and on ``GET /v1/harness/budget``; the trial then ends with outcome
``failed`` and reason ``budget``. A call that starts under the limit runs to its end, so
usage up to the cut is exact.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Budget(BaseModel):
    """Per-trial limits; ``None`` means unlimited."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        frozen=True,
        alias_generator=lambda n: n.replace("_", "-"),
    )

    tokens: int | None = Field(default=None, gt=0, description="prompt + completion tokens")
    cost_usd: float | None = Field(default=None, gt=0, description="USD, as the gateway prices it")
    calls: int | None = Field(default=None, gt=0, description="model calls sent upstream")
    call_tokens: int | None = Field(
        default=None,
        gt=0,
        description="tokens one call may generate: the gateway lowers the call's own limit to it",
    )

    def merged(self, override: Budget | None) -> Budget:
        """This budget with every limit that ``override`` sets replaced."""
        if override is None:
            return self
        values = self.model_dump()
        values.update({k: v for k, v in override.model_dump().items() if v is not None})
        return Budget(**values)

    @property
    def unlimited(self) -> bool:
        return (
            self.tokens is None
            and self.cost_usd is None
            and self.calls is None
            and self.call_tokens is None
        )

    def exceeded(self, tokens: int, cost_usd: float, calls: int) -> str | None:
        """The first limit that usage has reached (``"tokens"``, ``"cost-usd"``, ``"calls"``)."""
        if self.tokens is not None and tokens >= self.tokens:
            return "tokens"
        if self.cost_usd is not None and cost_usd >= self.cost_usd:
            return "cost-usd"
        if self.calls is not None and calls >= self.calls:
            return "calls"
        return None
