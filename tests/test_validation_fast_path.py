"""Arguments that need no conversion skip it (issue 21) with exactly the full path's outcome.

:meth:`ArgumentValidator.coerce` returns well-typed arguments of a flat tool (read, bash, grep ...)
as they are; for many generated arguments of every built-in tool (well typed, coercible, wrong,
``null``, extra keys, huge or non-finite numbers) its value and errors must equal those of the
full TypeBox conversion and check, and :meth:`~ArgumentValidator.validate` must give an equal
model or the same error text. The full path itself is checked against Pi in test_validation.py.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from pi_lsp.agent.tool import ToolError
from pi_lsp.agent.validation import ArgumentValidator, _check, _convert, format_validation_error
from pi_lsp.tools.bash import BashArgs
from pi_lsp.tools.edit import EditArgs
from pi_lsp.tools.find import FindArgs
from pi_lsp.tools.grep import GrepArgs
from pi_lsp.tools.ls import LsArgs
from pi_lsp.tools.read import ReadArgs
from pi_lsp.tools.write import WriteArgs

MODELS = [ReadArgs, BashArgs, GrepArgs, FindArgs, LsArgs, WriteArgs, EditArgs]

VALUES: list[Any] = [
    "a.txt", "", "12", "true", " 1e3 ", "0x10", "null", 0, 1, -7, 2.5, -0.0, 2**53 - 1, 2**53, -(2**53), 10**400,
    math.inf, -math.inf, math.nan, True, False, None, [], ["x"], {}, {"k": 1},
]


def _full(validator: ArgumentValidator, raw: Any) -> tuple[Any, list[tuple[str, str]]]:
    converted = _convert(validator._root, raw)
    errors: list[tuple[str, str]] = []
    _check(validator._root, converted, "", errors)
    return converted, errors


def _arguments(rng: random.Random, validator: ArgumentValidator) -> Any:
    if rng.random() < 0.05:
        return rng.choice(VALUES)  # not even an object
    names = list(validator._root.properties) + ["extra", "other"]
    return {name: rng.choice(VALUES) for name in rng.sample(names, rng.randrange(len(names) + 1))}


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself and -0.0 told from 0.0 (an int 0 is not a float)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _outcome(validator: ArgumentValidator, raw: Any) -> Any:
    try:
        return validator.validate("tool", raw).model_dump()
    except ToolError as exc:
        return exc.message


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_same_value_errors_and_outcome_as_the_full_conversion(model: type) -> None:
    validator = ArgumentValidator(model)
    rng = random.Random(model.__name__)
    fast = 0
    for _ in range(3000):
        raw = _arguments(rng, validator)
        value, errors = validator.coerce(raw)
        full_value, full_errors = _full(validator, raw)
        assert errors == full_errors, raw
        assert _same(value, full_value), raw
        fast += value is raw
        if not full_errors:
            expected = validator.model.model_validate(full_value).model_dump()
            assert _same(_outcome(validator, raw), expected), raw
        else:
            assert _outcome(validator, raw) == format_validation_error("tool", full_errors, raw)
    if model is not EditArgs:  # a closed object with an array: always converted
        assert fast > 0, "no argument took the fast path"


def test_well_typed_read_arguments_are_taken_as_they_are() -> None:
    validator = ArgumentValidator(ReadArgs)
    raw = {"path": "a.txt", "offset": 3, "limit": 2.0, "unknown": [1]}
    assert validator.coerce(raw) == (raw, []) and validator.coerce(raw)[0] is raw
    for changed in ({"path": 5}, {"path": "a", "offset": "3"}, {"path": "a", "limit": None}, {"path": "a", "offset": True}):
        assert validator.coerce(changed)[0] is not changed
