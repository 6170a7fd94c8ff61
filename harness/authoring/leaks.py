"""Does a scenario's task text give its solution away? (pure: text in, findings out)

The instructions and the SPEC are compared with what the reference solution adds to
code (test files left out): the conditions it tests, the messages it writes, and the
internal names it introduces. A condition on a field or an item (``n.path == ""``,
``prev[end] is no_pad``) is leaked when the text names the field next to the literal
(``its path is ""``) or spells the comparison out; a message (three words or more) when
the text holds it, or three quarters of its words in order; an internal name
(``_helper``, an unexported Go ``lastIndex``) when the text names it. A comparison of a
plain parameter (``n < 1``) and public names are the behaviour and the API a task
states. Each finding is for the author to fix or accept: an accepted finding's key is
listed, one a line, in the scenario's ``accepted-leaks.txt``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ACCEPTED = "accepted-leaks.txt"
STRING = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`"
LITERAL = rf"(?:{STRING}|\b(?:nil|None|True|False|true|false)\b|-?\b\d+(?:\.\d+)?\b)"
OPERAND = rf"(?:{LITERAL}|[A-Za-z_][\w.]*(?:\([^()]*\)|\[[^\[\]]*\])*)"
COMPARE = re.compile(
    rf"({OPERAND})\s*(==|!=|<=|>=|<|>|\bis not\b|\bis\b|\bnot in\b|\bin\b)\s*({OPERAND})"
)
# an internal name: a private helper (``_pad``) or an unexported Go name (``lastIndex``);
# public names (exported, the API the tests call) are what a task must name
INTERNAL = re.compile(r"^(?=.{4,})(?:_[A-Za-z]\w*|[a-z][a-z0-9]*[A-Z]\w*)$")
WORDS = re.compile(r"[A-Za-z0-9_]+")
MESSAGE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
NEAR = 40  # characters between an operand's name and its literal in the text


@dataclass(frozen=True)
class Leak:
    kind: str  # condition | literal | identifier
    code: str  # what the solution has
    said: str  # where the text says it
    key: str  # the line that accepts it in accepted-leaks.txt

    def line(self) -> str:
        return f"{self.kind} `{self.code}` is in the task text: ...{self.said}..."


def patch_lines(patch: str) -> tuple[list[str], list[str]]:
    """(added, kept): the lines a diff adds, and those it removes or keeps as context."""
    added: list[str] = []
    kept: list[str] = []
    test = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            path = line.split(" b/", 1)[-1]
            test = bool(re.search(r"(_test\.go|(^|/)test_[^/]*\.py|_test\.py)$|(^|/)tests?/", path))
        if test or line.startswith(("+++", "---", "@@", "diff ", "index ")):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith(("-", " ")):
            kept.append(line[1:])
    return added, kept


def _code_only(line: str) -> str:
    """A line without its comment (``//`` or ``#`` outside a string)."""
    out = re.sub(STRING, lambda m: "\0" * len(m.group(0)), line)
    cut = min((i for i in (out.find("//"), out.find("#")) if i >= 0), default=len(line))
    return line[:cut]


def conditions(added: list[str], kept: list[str]) -> list[tuple[str, str, str]]:
    """New comparisons against a literal: (the comparison, operand name, literal)."""
    old = {re.sub(r"\s+", "", m.group(0)) for ln in kept for m in COMPARE.finditer(ln)}
    out = []
    for line in added:
        for m in COMPARE.finditer(_code_only(line)):
            left, right = m.group(1), m.group(3)
            if re.fullmatch(LITERAL, left):
                left, right = right, left
            if not re.fullmatch(LITERAL, right) or re.fullmatch(LITERAL, left):
                continue
            if re.sub(r"\s+", "", m.group(0)) in old:
                continue
            if not re.search(r"[.\[]", left):
                continue  # a parameter or a local compared: behaviour a task may state
            name = re.findall(r"[A-Za-z_]\w*", left)[-1]
            out.append((m.group(0), name, right))
    return out


def literals(added: list[str], kept: list[str]) -> list[str]:
    old = {m.group(0)[1:-1] for ln in kept for m in re.finditer(STRING, ln)}
    found = [m.group(0)[1:-1] for ln in added for m in re.finditer(STRING, _code_only(ln))]
    return sorted({s for s in found if s not in old and len(MESSAGE_WORD.findall(s)) >= 3})


def identifiers(added: list[str], kept: list[str]) -> list[str]:
    def names(lines: list[str]) -> set[str]:
        text = "\n".join(re.sub(STRING, " ", _code_only(ln)) for ln in lines)
        return set(re.findall(r"[A-Za-z_]\w*", text))

    return sorted(n for n in names(added) - names(kept) if INTERNAL.match(n))


def _around(text: str, start: int, end: int) -> str:
    return " ".join(text[max(0, start - 30) : end + 30].split())


def _forms(literal: str) -> list[str]:
    """How the text may write a literal: quoted any way; bare when long enough."""
    if literal[:1] in "\"'`":
        inner = literal[1:-1]
        return [f'"{inner}"', f"'{inner}'", f"`{inner}`", *([inner] if len(inner) >= 3 else [])]
    return [literal]


def _condition_leak(text: str, cond: str, name: str, literal: str) -> str | None:
    if re.sub(r"\s+", "", cond) in re.sub(r"\s+", "", text):
        return cond.strip()
    for m in re.finditer(rf"\b{re.escape(name)}\b", text):
        window = text[m.end() : m.end() + NEAR]
        for form in _forms(literal):
            hit = re.search(rf"(?<![\w.-]){re.escape(form)}(?![\w.])", window)
            if hit:
                return _around(text, m.start(), m.end() + hit.end())
    return None


def _literal_leak(text: str, literal: str) -> str | None:
    at = text.find(literal)
    if at >= 0:
        return _around(text, at, at + len(literal))
    words = [w.lower() for w in WORDS.findall(literal)]
    if len(words) < 3:
        return None
    said = [(m.group(0).lower(), m.start()) for m in WORDS.finditer(text)]
    size = len(words)
    for i in range(len(said) - size + 1):
        run = said[i : i + size]
        same = sum(a == b for a, (b, _) in zip(words, run, strict=True))
        if same >= 0.75 * size:
            return _around(text, run[0][1], run[-1][1])
    return None


def find_leaks(text: str, patch: str) -> list[Leak]:
    """Every piece of the solution the task ``text`` gives away."""
    added, kept = patch_lines(patch)
    found: list[Leak] = []
    for cond, name, literal in conditions(added, kept):
        said = _condition_leak(text, cond, name, literal)
        if said:
            found.append(Leak("condition", cond.strip(), said, f"condition {cond.strip()}"))
    for literal in literals(added, kept):
        said = _literal_leak(text, literal)
        if said:
            found.append(Leak("literal", literal, said, f"literal {literal}"))
    for name in identifiers(added, kept):
        m = re.search(rf"\b{re.escape(name)}\b", text)
        if m:
            found.append(Leak("identifier", name, _around(text, m.start(), m.end()), name))
    return found


def accepted(folder: Path) -> set[str]:
    path = folder / ACCEPTED
    if not path.is_file():
        return set()
    lines = path.read_text(errors="replace").splitlines()
    return {ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")}


def watch_list(patch: str) -> dict[str, list[str]]:
    """What a task text must not spell out: the solution's new conditions on fields,
    its messages and its internal names (``harness mine`` writes it beside a draft)."""
    added, kept = patch_lines(patch)
    return {
        "conditions": sorted({c.strip() for c, _, _ in conditions(added, kept)}),
        "messages": literals(added, kept),
        "internal_names": identifiers(added, kept),
    }


def scenario_leaks(
    folder: Path, instructions: str, spec: str | None, solution: str | None
) -> tuple[list[Leak], list[Leak]]:
    """(open, accepted) findings of a scenario folder: its instructions and SPEC against
    its solution patch (none without one)."""
    if not solution or not (folder / solution).is_file():
        return [], []
    text = instructions
    if spec and (folder / spec).is_file():
        text += "\n" + (folder / spec).read_text(errors="replace")
    found = find_leaks(text, (folder / solution).read_text(errors="replace"))
    ok = accepted(folder)
    return [f for f in found if f.key not in ok], [f for f in found if f.key in ok]
