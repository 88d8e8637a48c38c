"""The names of the ``pi`` settings, read from their pydantic model, and the hint for a misspelt one.

A setting's path is its camelCase wire name, dotted through the sections (``edit.review``). Both
:func:`pi_lsp.daemon.settings.parse_settings` (to name an unknown key and suggest the setting
meant) and the tests that check every editor offers every setting read the paths from here, so a
new field is known everywhere as soon as it is in the model.
"""

from __future__ import annotations

import difflib

from pydantic import BaseModel


def sections(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of ``model`` that are themselves models, by wire name: ``{"edit": EditSection, ...}``."""
    found: dict[str, type[BaseModel]] = {}
    for name, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            found[info.alias or name] = info.annotation
    return found


def setting_paths(model: type[BaseModel]) -> list[str]:
    """Every leaf setting of ``model`` as a dotted wire path, in declaration order, e.g.
    ``["provider", ..., "edit.route", "edit.applyTimeoutSeconds", ...]`` (a section's fields, not the
    section; a field holding a list or dict of free-form items, like ``approvals.rules``, is a leaf)."""
    paths: list[str] = []
    nested = sections(model)
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key in nested:
            paths += [f"{key}.{leaf}" for leaf in setting_paths(nested[key])]
        else:
            paths.append(key)
    return paths


def unknown_key_message(model: type[BaseModel], path: tuple[str, ...]) -> str:
    """The problem reported for an unknown key at ``path`` (keys as given, below ``pi``), e.g.
    ``"pi.edit.reveiw: unknown setting, ignored; did you mean pi.edit.review?"``; a key holding a
    dot is quoted: ``'pi: unknown setting "edit.review", ignored; did you mean pi.edit.review? ...'``.

    The hint is, in order: a close spelling of a setting at the same level (:mod:`difflib`, ratio
    0.6 or more); a dotted key (``"edit.review"`` written flat) naming a setting, to be written
    nested; a top-level key that is the name of a setting in exactly one section
    (``review`` for ``edit.review``). No hint when none applies.
    """
    if any("." in key for key in path):
        where = "pi" + "".join(f".{key}" for key in path[:-1])
        return f'{where}: unknown setting "{path[-1]}", ignored' + _hint(model, path)
    return "pi." + ".".join(path) + ": unknown setting, ignored" + _hint(model, path)


def _hint(model: type[BaseModel], path: tuple[str, ...]) -> str:
    level: type[BaseModel] = model
    for key in path[:-1]:
        level = sections(level).get(key, level)
    prefix = "pi." + "".join(f"{key}." for key in path[:-1])
    key = path[-1]
    names = [info.alias or field for field, info in level.model_fields.items()]
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {prefix}{close[0]}?"
    if len(path) != 1:
        return ""
    every = setting_paths(model)
    flat = key.removeprefix("pi.")
    if "." in flat and flat in every:
        head, _, rest = flat.partition(".")
        return f"; did you mean pi.{flat}? Write it nested: {{\"{head}\": {{\"{rest}\": ...}}}}"
    owners = [p for p in every if p.endswith("." + key)]
    if len(owners) == 1:
        return f"; did you mean pi.{owners[0]}?"
    return ""
