"""The scenario format's field descriptions: each names a real field, reaches the schema
``harness schema scenario`` shows, and a model is described without changing validation."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from harness.scenario import model
from harness.scenario.fields import DESCRIPTIONS, describe

pytestmark = pytest.mark.unit


def test_every_description_names_a_real_field_and_is_on_it() -> None:
    for name, table in DESCRIPTIONS.items():
        cls = getattr(model, name)
        for field, text in table.items():
            assert field in cls.model_fields, f"{name}.{field}: no such field"
            assert cls.model_fields[field].description == text, f"{name}.{field}"


def test_the_schema_shows_them_by_their_written_names() -> None:
    props = model.Scenario.model_json_schema(by_alias=True)["properties"]
    assert props["name"]["description"] == DESCRIPTIONS["Scenario"]["name"]
    assert props["task-date"]["description"] == DESCRIPTIONS["Scenario"]["task_date"]


def test_describe_sets_known_fields_and_skips_the_rest() -> None:
    class Classification(BaseModel):  # named like a described model, with one field of it
        type: str
        extra: int = 0

    describe(Classification)
    assert Classification.model_fields["type"].description == DESCRIPTIONS["Classification"]["type"]
    assert Classification.model_fields["extra"].description is None
    assert Classification(type="fix-bug").type == "fix-bug"
    schema = Classification.model_json_schema()["properties"]["type"]
    assert schema["description"] == DESCRIPTIONS["Classification"]["type"]
