"""The real engine for tests and benchmarks: llama.cpp's server in the ``engine`` image,
serving the built-in model (SmolLM2-135M-Instruct, Q4_1), as harness's built-in fleet does.

``engine()`` starts one (labelled with a test trial id, so it is found and removed even
when a test dies) and stops it after the block. Loading takes ~4 s; keep answers short
(``max_tokens`` of a few tokens): the model writes ~190 tokens a second on two cores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from harness.fleet.engine_host import EngineHost, running_engine
from harness.fleet.engine_model import SMOLLM2, ensure_builtin_model
from harness.sandbox.cleanup import cleanup
from tests._docker import client_or_skip, new_trial

ALIAS = SMOLLM2.name


@contextlib.contextmanager
def engine(*, parallel: int = 2, context: int = 2048) -> Iterator[EngineHost]:
    """The built-in engine host for the block (image built and model fetched if needed)."""
    client = client_or_skip()
    trial = new_trial()
    try:
        with running_engine(
            ensure_builtin_model(),
            ALIAS,
            parallel=parallel,
            context=context,
            labels={"harness.trial": trial},
        ) as host:
            yield host
    finally:
        cleanup(trial=trial, client=client)
