"""The base of every tool's input model (pydantic, imported only when a tool is first used)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class ToolInput(BaseModel):
    """Unknown fields are refused, as the API would; `null` counts as an omitted field, since
    models served by local runtimes often send it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data
