"""Small touches to the CLI's help text: no ``<bool>`` after flags; the known agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.config.settings import Settings


def quiet_flag_types() -> None:
    """Show no value type after a flag (``--record``, not ``--record <bool>``).

    Recent typer prints every option's type; a flag takes no value, so for flags the type
    is only noise. Patched once on typer's option class; a no-op where typer lacks the hook.
    """
    try:
        from typer.core import TyperOption
    except ImportError:  # pragma: no cover - typer without its click subclasses
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_harness_quiet", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        result: str | None = original(self, ctx)
        return result

    display_type_rich._harness_quiet = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]


def agents_help(settings: Settings) -> str:
    """``--agent``'s help with the agents this project's agents.yml lists."""
    base = "a name from agents.yml"
    if not settings.project_found:
        return f"{base} (no project found: set HARNESS_HOME)"
    try:
        from harness.config.entrants import Registry

        names = sorted(Registry.load(settings.project_root).agents)
    except Exception as exc:  # help must print even when agents.yml is broken
        return f"{base} (unreadable: {type(exc).__name__})"
    return f"{base}: {', '.join(names)}"
