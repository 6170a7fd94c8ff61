"""What every part of report.json shares: keys another module adds travel along, written
after the declared ones, and numbers written as they were given (``1`` stays ``1``,
``1.0`` stays ``1.0``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Number = float | int


class Part(BaseModel):
    """A part of report.json: its declared fields in the order they are written."""

    model_config = ConfigDict(extra="allow")


__all__ = ["Number", "Part"]
