"""Loading a user's YAML file strictly, with errors that name the real cause.

Plain YAML only (PyYAML's safe loader: no ``!!python`` or other tags that build
objects), duplicate keys refused (YAML says they are an error; PyYAML keeps the last),
and every failure turned into one line: where, what, and how to fix it.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from harness.errors import UserError

FIELD = "(yaml)"


class _StrictLoader(yaml.SafeLoader):
    """The safe loader, refusing a key that appears twice in one mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, int] = {}
    for key_node, _value in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *base` then overriding one of base's keys is fine
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key; the safe constructor reports it below
            continue
        line = key_node.start_mark.line + 1
        if first is not None:
            raise _Duplicate(str(key), first, line, key_node.start_mark.column + 1)
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

_FastLoader: type[Any] | None = None
if getattr(yaml, "__with_libyaml__", False):  # libyaml's parser: ~20x faster on big files

    class _CStrictLoader(yaml.CSafeLoader):
        """``_StrictLoader`` with libyaml's parser (only for text that parses cleanly)."""

    _CStrictLoader.add_constructor(
        yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
    )
    _FastLoader = _CStrictLoader


class _Duplicate(Exception):
    def __init__(self, key: str, first: int, line: int, column: int) -> None:
        super().__init__(key)
        self.key, self.first, self.line, self.column = key, first, line, column


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _decode(data: bytes, file: Path) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}",
            file=file,
            field=FIELD,
            fix="save the file as UTF-8",
        ) from None
    return text.removeprefix("\ufeff")


def _syntax_fix(problem: str) -> str:
    """The fix for a scanner/parser problem; indentation advice only where it applies."""
    p = problem.lower()
    if "mapping values are not allowed" in p:
        return "quote a value that holds ': ', or indent the nested key under its parent"
    if "could not find expected ':'" in p or "expected <block end>" in p:
        return "check the indentation there: keys of one mapping line up in one column"
    if "quoted scalar" in p or "end of stream" in p:
        return "close the quote that starts there"
    if "expected ',' or ']'" in p or "expected ',' or '}'" in p or "flow" in p:
        return "close the [ or { that starts there, or quote a value holding , [ ] { }"
    if "undefined alias" in p:
        return "define the anchor (&name) before using it (*name), or remove the *"
    if "escape" in p:
        return "write the backslash twice, or use single quotes"
    if "'@'" in p or "'`'" in p or "reserved" in p:
        return "quote the value: @ and ` cannot start a plain YAML value"
    if "'%'" in p or "'|'" in p or "'>'" in p or "'*'" in p or "'&'" in p or "'!'" in p:
        return "quote the value: that character has a meaning at the start of a YAML value"
    return "correct the YAML at that position (quote values holding special characters)"


def parse_yaml(text: str, file: Path) -> Any:
    """Parse ``text`` (from ``file``) as plain YAML, or raise a one-line UserError."""
    nul = text.find("\x00")
    if nul >= 0:
        raise UserError(
            f"a NUL byte (\\0) at {_position(text, nul)}: this is not a text file",
            file=file,
            field=FIELD,
            fix="remove the NUL byte; save the file as plain UTF-8 text",
        )
    if _FastLoader is not None and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        try:
            return yaml.load(text, Loader=_FastLoader)  # a CSafeLoader: no python tags
        except (yaml.YAMLError, _Duplicate):
            pass  # the pure-Python loader below names the problem as it always has
    try:
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no python tags
    except _Duplicate as dup:
        raise UserError(
            f"key '{dup.key}' appears twice (lines {dup.first} and {dup.line})",
            file=file,
            field=dup.key,
            fix="keep one of them: YAML keys must be unique in a mapping",
        ) from None
    except yaml.constructor.ConstructorError as exc:
        raise _constructor_error(exc, file) from None
    except yaml.reader.ReaderError as exc:
        raise UserError(
            f"a control character (#x{exc.character:04x}) at {_position(text, exc.position)}",
            file=file,
            field=FIELD,
            fix="remove it; YAML files hold printable text only",
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or "invalid YAML"
        if "'\\t'" in problem:
            raise UserError(
                f"a tab character at {where}: YAML indents with spaces only",
                file=file,
                field=FIELD,
                fix="replace the tab with spaces",
            ) from None
        raise UserError(
            f"YAML syntax error at {where}: {problem}",
            file=file,
            field=FIELD,
            fix=_syntax_fix(problem),
        ) from None
    except yaml.YAMLError as exc:
        raise UserError(
            f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
            file=file,
            field=FIELD,
            fix="correct the YAML",
        ) from None


def _constructor_error(exc: yaml.constructor.ConstructorError, file: Path) -> UserError:
    mark = exc.problem_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
    problem = exc.problem or ""
    if "constructor for the tag" in problem:
        tag = problem.split("tag", 1)[1].strip(" '")
        shown = tag.replace("tag:yaml.org,2002:", "!!")
        if shown.startswith("!!python"):
            return UserError(
                f"the tag {shown} at {where} is not allowed: harness never builds Python objects",
                file=file,
                field=FIELD,
                fix="remove the tag; write plain strings, numbers, lists and mappings",
            )
        return UserError(
            f"unknown tag {shown} at {where}",
            file=file,
            field=FIELD,
            fix="remove the tag, or quote the value if the ! is meant as text",
        )
    if "unhashable" in problem:
        return UserError(
            f"a list or mapping used as a key at {where}",
            file=file,
            field=FIELD,
            fix="keys are plain words; quote the key",
        )
    return UserError(
        f"YAML error at {where}: {problem or exc}",
        file=file,
        field=FIELD,
        fix="write plain strings, numbers, lists and mappings",
    )


def read_text(file: Path) -> str:
    """The file's text (UTF-8, a leading BOM dropped), or a one-line UserError."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise UserError(
            f"cannot read the file: {exc.strerror}", file=file, fix="check the path"
        ) from None
    return _decode(data, file)


def load_yaml_file(file: Path) -> Any:
    """Read and parse ``file``; every failure is a one-line UserError naming it."""
    return parse_yaml(read_text(file), file)


def kebab(name: str) -> str:
    """Alias generator: ``python_name_`` -> ``python-name`` (YAML keys are kebab-case)."""
    return name.rstrip("_").replace("_", "-")


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Keys that are valid at the parent of ``loc`` (for did-you-mean)."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int) or current is None:
            continue
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        current = _model_of(field.annotation)
    if current is None:
        return []
    return [f.alias or n for n, f in current.model_fields.items()]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found:
            return found
    return None


def format_validation_error(
    err: ValidationError,
    file: Path,
    model: type[BaseModel],
    schema_hint: str = "see `harness schema scenario`",
) -> UserError:
    """Turn pydantic's report into one line: file, field, what is wrong, the fix."""
    errors = err.errors()
    # a misspelt key also reports the real key as missing: name the typo first
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(first["loc"])
    field = _field_path(loc) or "(top level)"
    more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    kind = first["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        allowed = _allowed_keys(model, loc)
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
        return UserError(f"unknown key '{key}'{more}", file=file, field=field, fix=hint)
    if kind == "missing":
        return UserError(
            f"required field is missing{more}",
            file=file,
            field=field,
            fix=f"add '{loc[-1]}:' ({schema_hint})",
        )
    msg = str(first["msg"]).removeprefix("Value error, ")
    fix = (first.get("ctx") or {}).get("fix") or schema_hint
    return UserError(f"{msg}{more}", file=file, field=field, fix=fix)
