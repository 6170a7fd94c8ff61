"""How tightly a sandbox holds what runs in it: the scenario's ``sandbox:`` block.

Everything is hardened by default; a scenario relaxes a single item only when its task
truly needs it (e.g. ``sandbox: {read-only-root: false, capabilities: [NET_RAW]}``), and
the policy a trial ran under is recorded in run.json and report.json.

Defaults, and why:

- ``capabilities: []``: every Linux capability is dropped. A coding agent edits files
  it owns (it runs as the workspace owner's uid), runs compilers, tests and git; none of
  that needs a capability. Installing system packages would (it also needs a writable
  root), so a task that needs it says so. The engine gives a non-root process no
  capabilities at all, so adding one makes commands run as root (with CHOWN,
  DAC_OVERRIDE and FOWNER, root's usual powers over files), recorded as relaxing
  ``non-root``.
- ``no-new-privileges``: setuid binaries in the image (su, mount, passwd) cannot raise
  privileges.
- ``non-root``: commands run as the host workspace owner's uid:gid (or a fixed unprivileged
  uid when the workspace belongs to root), so files end up owned as the host expects.
- ``read-only-root``: the image cannot be changed; the workspace, ``$HOME`` and ``/tmp``
  are the only writable places, each with a size cap.
- size caps: ``/tmp`` and ``$HOME`` are size-capped tmpfs volumes (hard caps, counted in
  the container's memory); the bind-mounted workspace is watched and the trial is stopped
  once it grows past ``workspace-size`` (``limit: disk``); stdout and stderr are kept up
  to ``output-limit`` each, the rest counted and dropped (``limit: output``).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Linux capabilities Docker knows by name (without the CAP_ prefix).
_CAP_NAMES = (
    "AUDIT_CONTROL AUDIT_READ AUDIT_WRITE BLOCK_SUSPEND BPF CHECKPOINT_RESTORE CHOWN "
    "DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID IPC_LOCK IPC_OWNER KILL LEASE "
    "LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN NET_BIND_SERVICE "
    "NET_BROADCAST NET_RAW PERFMON SETFCAP SETGID SETPCAP SETUID SYS_ADMIN SYS_BOOT "
    "SYS_CHROOT SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_RESOURCE SYS_TIME "
    "SYS_TTY_CONFIG SYSLOG WAKE_ALARM"
)
CAPABILITIES = frozenset(_CAP_NAMES.split())
SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?$", re.IGNORECASE)
UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str | int) -> int:
    """Bytes in ``text`` ("512m", "2g", "1.5G", "4096"); ValueError when unreadable."""
    if isinstance(text, int):
        return text
    found = SIZE.match(str(text).strip())
    if not found:
        raise ValueError(f"'{text}' is not a size; write e.g. 512m or 2g")
    return int(float(found.group(1)) * UNITS[found.group(2).lower()])


class SandboxPolicy(BaseModel):
    """The scenario's ``sandbox:`` block; every field defaults to the hardened choice."""

    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        frozen=True,
        alias_generator=lambda n: n.replace("_", "-"),
    )

    read_only_root: bool = True
    no_new_privileges: bool = True
    non_root: bool = True
    capabilities: list[str] = Field(default_factory=list)
    workspace_size: str = "4g"
    tmp_size: str = "1g"
    home_size: str = "1g"
    output_limit: str = "16m"

    @field_validator("capabilities", mode="before")
    @classmethod
    def _caps(cls, value: object) -> object:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            name = str(item).upper().removeprefix("CAP_")
            if name not in CAPABILITIES:
                raise ValueError(f"unknown capability '{item}'; use e.g. NET_RAW or CHOWN")
            out.append(name)
        return sorted(set(out))

    @field_validator("workspace_size", "tmp_size", "home_size", "output_limit", mode="before")
    @classmethod
    def _size(cls, value: object) -> object:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(int(value))
        if isinstance(value, str) and parse_size(value) <= 0:
            raise ValueError("a size must be positive")
        return value

    @property
    def runs_as_root(self) -> bool:
        """Commands run as root when ``non-root`` is off or capabilities are added: the
        engine gives a non-root process no capabilities, so an added one needs root."""
        return not self.non_root or bool(self.capabilities)

    def bytes(self, field: str) -> int:
        """A size field in bytes (``workspace_size``, ``tmp_size``, ...)."""
        return parse_size(getattr(self, field))

    def relaxed(self) -> list[str]:
        """The items this policy relaxes against the default, for reports."""
        default = SandboxPolicy()
        out = [
            name.replace("_", "-")
            for name in ("read_only_root", "no_new_privileges")
            if getattr(self, name) != getattr(default, name)
        ]
        if self.runs_as_root:
            out.append("non-root")
        out += [f"cap:{cap}" for cap in self.capabilities]
        return out

    def record(self) -> dict[str, object]:
        """What run.json and report.json keep: the policy (YAML keys) and what it relaxes."""
        return {**self.model_dump(by_alias=True), "relaxed": self.relaxed()}


DEFAULT_POLICY = SandboxPolicy()
