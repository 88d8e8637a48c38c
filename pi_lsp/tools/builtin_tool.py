"""The common part of the seven built-in tools.

Every built-in tool is a :class:`BuiltinTool` subclass that sets ``name``, ``label``,
``description`` (the peer's text, verbatim) and ``args_model``, and implements ``execute``. The base
supplies what they share in the :class:`~pi_lsp.agent.tool.Tool` protocol: the session environment,
the JSON Schema derived from ``args_model`` (the peer's schema, see
:func:`~pi_lsp.agent.schema.json_schema_of`), parallel execution, and an identity
``prepare_arguments`` (only ``edit`` has Pi's argument shim).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from pi_lsp.agent.schema import json_schema_of
from pi_lsp.tools.environment import ToolEnvironment


class BuiltinTool:
    """Base class of the built-in tools; subclasses add ``execute(args, ctx) -> ToolResult``.

    Attributes:
        env: the session the tool works in (cwd, the ``FileAccess`` seam, temp folder, settings).
        parameters: the JSON Schema sent to models, computed once per tool instance when first
            asked (so starting a session, e.g. ``pi-lsp exec``, does not build seven schemas).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str]
    args_model: ClassVar[type[BaseModel]]
    execution_mode: ClassVar[Literal["parallel", "sequential"]] = "parallel"

    def __init__(self, env: ToolEnvironment) -> None:
        self.env = env

    @cached_property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of ``args_model`` sent to models (see the class docstring)."""
        return json_schema_of(self.args_model)

    def prepare_arguments(self, raw: Any) -> Any:
        """Identity: the raw arguments go to validation unchanged."""
        return raw
