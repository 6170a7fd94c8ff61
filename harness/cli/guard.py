"""Every command's error contract: a harness error becomes one line on stderr and its
documented exit code (2 bad input, 3 infrastructure), an interrupt exit 130, a Docker or
connection failure ``infrastructure error`` exit 3."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import typer

from harness.errors import EXIT_INFRA, HarnessError

F = TypeVar("F", bound=Callable[..., Any])


def guarded(func: F) -> F:
    """Turn harness errors into one line on stderr and the documented exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except HarnessError as exc:
            typer.echo(f"harness: {exc.one_line()}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            typer.echo("harness: interrupted", err=True)
            raise typer.Exit(130) from None
        except Exception as exc:
            if not _is_infra(exc):
                raise
            typer.echo(f"harness: infrastructure error: {type(exc).__name__}: {exc}", err=True)
            raise typer.Exit(EXIT_INFRA) from None

    return wrapper  # type: ignore[return-value]


def _is_infra(exc: BaseException) -> bool:
    """Docker engine and connection failures: the environment, not the user's input."""
    if isinstance(exc, BrokenPipeError):
        return False  # stdout's reader left (`| head`): click ends quietly
    names = {c.__module__.split(".")[0] for c in type(exc).__mro__}
    return bool(names & {"docker", "requests", "urllib3", "httpx"}) or isinstance(
        exc, ConnectionError | TimeoutError
    )


__all__ = ["guarded"]
