"""harness: reproducible, containerised benchmarks of coding agents paired with LLMs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("harness")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

__all__ = ["__version__"]
