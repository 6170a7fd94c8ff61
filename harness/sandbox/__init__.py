"""Where code runs: the host (``local``) or a disposable Docker container (``docker``)."""

from harness.sandbox.base import ExecResult, Sandbox, SandboxSpec

__all__ = ["ExecResult", "Sandbox", "SandboxSpec"]
