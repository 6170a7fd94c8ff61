"""An LM Studio look-alike model host for tests: ``TestHost`` in this process, or
``python -m harness.testing.lmstudio --port 8101`` as one of its own.

``host.py`` is the app and ``TestHost``; ``state.py`` the host's speed, faults and state;
``__main__.py`` the command line.
"""

from harness.testing.lmstudio.host import TestHost, create_app
from harness.testing.lmstudio.state import Faults, HostSpec

__all__ = ["Faults", "HostSpec", "TestHost", "create_app"]
