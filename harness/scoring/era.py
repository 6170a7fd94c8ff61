"""Eras and pins: which scorer produced a number, and whether it may produce one.

Era string: ``<suite name>@<version>``, with ``-rc`` when the suite's thresholds file is
not calibrated, or was calibrated for another scorer: a thresholds file may record the
code fingerprint (``scorer:``) of everything that grades (suite, SPEC, fixtures, the app
kit and the composition), so an edit anywhere there makes a provisional era. A
thresholds file marked ``calibrated: true`` must match the sha256 pin
declared in the suite; otherwise the scorer refuses to score (a silently edited
threshold would put numbers from two graders in one table).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.errors import UserError
from harness.scoring.suite import Suite
from harness.util.fs import in_tool_cache


class Thresholds(BaseModel):
    """Control thresholds: HIGH must reach ``high``, LOW must stay at or under ``low``.

    ``epsilon`` is how far a check's score may drop before a defect counts as breaking
    it (``declared_epsilon``, when set, for the checks the defect declares). Extra keys
    are kept for suite-specific use.
    """

    model_config = ConfigDict(extra="allow")

    calibrated: bool
    high: float = Field(ge=0.0, le=1.0)
    low: float = Field(ge=0.0, le=1.0)
    epsilon: float = Field(default=0.01, ge=0.0, lt=1.0)
    declared_epsilon: float | None = Field(
        default=None,
        ge=0.0,
        lt=1.0,
        description="how far a check a defect declares breaking must drop to count as "
        "broken (default epsilon); undeclared checks still cascade only past epsilon",
    )
    success_bar: float | None = Field(
        default=None, ge=0.0, le=1.0, description="a trial succeeds at or above it (default high)"
    )
    budgets: dict[str, float] = Field(
        default_factory=dict, description="time budgets (seconds) a suite reads by name"
    )
    scorer: str | None = Field(
        default=None,
        description="code fingerprint of the scorer calibrated (suite, SPEC, fixtures, app "
        "kit, composition); another scorer is a provisional era",
    )

    @property
    def bar(self) -> float:
        """The success bar: ``success_bar`` when set, else ``high``."""
        return self.high if self.success_bar is None else self.success_bar

    def budget(self, name: str, default: float) -> float:
        return float(self.budgets.get(name, default))


class Stamp(BaseModel):
    """What a report carries about its scorer."""

    era: str
    fingerprint: str
    calibrated: bool
    scorer: str = ""


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def fingerprint(paths: list[Path], *, unpinned: bool = False, code: bool = False) -> str:
    """sha256 over the names and bytes of the files (directories walked, sorted).

    Names are relative to each given path's parent, so the same tree elsewhere on disk
    gets the same fingerprint. ``unpinned`` blanks ``thresholds_pin=...`` in the bytes
    (the code fingerprint is written into the file that pin hashes). ``code`` leaves a
    walked folder's ``README.md`` out (a package's page for readers, not grading code).
    """
    return digest_of(entries(paths, unpinned=unpinned, code=code))


def digest_of(found: list[tuple[str, bytes]]) -> str:
    """sha256 over listed names and bytes (``fingerprint`` of what ``entries`` lists)."""
    digest = hashlib.sha256()
    for name, data in found:
        digest.update(name.encode() + b"\0")
        digest.update(data)
        digest.update(b"\0")
    return digest.hexdigest()


def entries(
    paths: list[Path], *, unpinned: bool = False, code: bool = False
) -> list[tuple[str, bytes]]:
    """What ``fingerprint`` hashes, in its order: each file's name and bytes, sorted by
    name (a file given alone is named by its own name, so two may share one)."""
    found: list[tuple[str, Path]] = []
    for given in paths:
        given = Path(given)
        if not given.exists():
            raise UserError(
                f"cannot fingerprint {given}: it does not exist",
                file=given,
                fix="declare only existing suite sources and fixtures",
            )
        files = (
            sorted(
                p
                for p in given.rglob("*")
                if p.is_file()
                and not in_tool_cache(p, given)
                and not (code and p.name == "README.md")
            )
            if given.is_dir()
            else [given]
        )
        found.extend((f.relative_to(given.parent).as_posix(), f) for f in files)
    out: list[tuple[str, bytes]] = []
    for name, file in sorted(found, key=lambda e: e[0]):
        data = file.read_bytes()
        out.append((name, _PIN.sub(b"thresholds_pin=PIN", data) if unpinned else data))
    return out


#: A suite's ``thresholds_pin=`` argument as its source spells it (None or a hex string).
PIN_ARGUMENT = r"thresholds_pin\s*=\s*(None|\"[0-9a-f]*\"|'[0-9a-f]*')"
_PIN = re.compile(PIN_ARGUMENT.encode())


#: Shared code every suite's grading runs through: the app kit (mocks, fixtures,
#: browser helpers, processes) and the composition arithmetic.
_SCORING = Path(__file__).resolve().parent
FRAMEWORK = (
    _SCORING.parent / "appkit",
    *(_SCORING / f"{m}.py" for m in ("compose", "must", "rows", "run", "suite")),
)


def code_paths(suite: Suite) -> list[Path]:
    """Everything that grades except the thresholds file: the suite's sources (SPEC
    included), its fixtures and ``FRAMEWORK``."""
    return [*suite.source_files(), *suite.fixtures, *FRAMEWORK]


def code_fingerprint(suite: Suite) -> str:
    """Fingerprint of everything that grades except the thresholds file itself."""
    return fingerprint(code_paths(suite), unpinned=True, code=True)


def load_thresholds(path: Path) -> Thresholds:
    """Parse a thresholds YAML file into ``Thresholds`` (UserError when malformed)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(
            f"cannot read thresholds: {exc}", file=path, fix="write YAML with calibrated, high, low"
        ) from exc
    try:
        return Thresholds.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(
            f"invalid thresholds: {first['msg']}",
            file=path,
            field=".".join(str(x) for x in first["loc"]),
            fix="write YAML with calibrated: bool, high: float, low: float",
        ) from exc


#: Beside the thresholds, the pin of a suite whose code names no ``thresholds_pin=``:
#: adding that argument after a calibration would change the scorer's own fingerprint,
#: which the thresholds' ``scorer`` stamp and every line of the calibration ledger hold.
PIN_FILE = "thresholds.pin"


def pin_of(suite: Suite) -> str | None:
    """The suite's ``thresholds_pin=``, else the pin file beside its thresholds."""
    if suite.thresholds_pin is not None or suite.thresholds is None:
        return suite.thresholds_pin
    try:
        return Path(suite.thresholds).with_name(PIN_FILE).read_text().strip() or None
    except OSError:
        return None


def check_pin(suite: Suite) -> Thresholds | None:
    """Load the suite's thresholds, refusing a calibrated file that misses its pin."""
    if suite.thresholds is None:
        return None
    found = load_thresholds(suite.thresholds)
    if found.calibrated:
        actual, pin = sha256_file(suite.thresholds), pin_of(suite)
        if pin != actual:
            raise UserError(
                f"suite {suite.name}: calibrated thresholds sha256 {actual} does not match "
                f"the pin {pin}; the scorer will not score",
                file=suite.thresholds,
                field="thresholds_pin" if suite.thresholds_pin is not None else PIN_FILE,
                fix="recalibrate and update the pin (a new era), or restore the file",
            )
    return found


def era_of(suite: Suite, thresholds: Thresholds | None, scorer: str | None = None) -> str:
    """``name@version``, with ``-rc`` when a thresholds file exists but is uncalibrated,
    or was calibrated for another scorer (``scorer``: this one's code fingerprint)."""
    rc = thresholds is not None and not _calibrated_for(thresholds, scorer)
    return f"{suite.name}@{suite.version}{'-rc' if rc else ''}"


def _calibrated_for(thresholds: Thresholds, scorer: str | None) -> bool:
    if not thresholds.calibrated:
        return False
    return thresholds.scorer is None or scorer is None or thresholds.scorer == scorer


def stamp(suite: Suite) -> Stamp:
    """Check the pin, then fingerprint sources, SPEC, fixtures, app kit and thresholds."""
    found = check_pin(suite)
    code = code_fingerprint(suite)
    files = code_paths(suite)
    if suite.thresholds is not None:
        files.append(suite.thresholds)
    return Stamp(
        era=era_of(suite, found, code),
        fingerprint=fingerprint(files, code=True),
        calibrated=found is None or _calibrated_for(found, code),
        scorer=code,
    )
