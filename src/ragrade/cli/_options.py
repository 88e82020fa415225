"""Click options made from the declarations of :mod:`ragrade.options`: the command line takes what the Python
API takes, with the same constraint, default and documentation, and refuses a value with the same message
(spelled ``--flag``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragrade.errors import InputError
from ragrade.options import Option, spelling


class OptionType(click.ParamType):
    """A click type converting the command-line text with :meth:`ragrade.options.Option.parse`."""

    def __init__(self, spec: Option) -> None:
        self.spec = spec
        self.name = (spec.metavar or {int: "integer", float: "number", bool: "boolean"}.get(spec.kind, "text")).lower()

    def get_metavar(self, param: click.Parameter, *args: Any, **kwargs: Any) -> str | None:
        return self.spec.metavar or self.name.upper()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value  # a default, already a value
        with spelling("cli"):
            try:
                return self.spec.parse(value)
            except InputError as exc:  # the declaration's own words, which name the option
                raise click.UsageError(str(exc), ctx) from None


class OptionChoice(click.Choice):
    """A click choice listing the canonical names in ``--help``; the aliases the Python API takes are
    taken too (``--test fisher`` = ``randomization``)."""

    def __init__(self, spec: Option) -> None:
        super().__init__([str(c) for c in spec.choices or ()], case_sensitive=False)
        self.spec = spec

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            aliases = dict(self.spec.aliases)
            key = value.strip().lower()
            value = aliases.get(key, key)
        return super().convert(value, param, ctx)


def click_type(spec: Option) -> click.ParamType:
    """The click type of a declaration: a choice, else a type converting with ``spec.parse``."""
    return OptionChoice(spec) if spec.choices is not None else OptionType(spec)


def option(spec: Option, *decls: str, dest: str | None = None,
           **overrides: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of ``spec``: its flag (or ``decls``, e.g. a short ``-m``), type, default and help
    (documentation and constraint); ``overrides`` are click's keywords (``default=``, ``hidden=``...). The
    command's parameter is the option's Python name (or ``dest``)."""
    spelled_as = decls or tuple(d for d in (spec.flag,) if d)
    if not spelled_as:
        spelled_as = ("--" + spec.name.replace("_", "-"),)
    keywords: dict[str, Any] = {"type": click_type(spec), "default": spec.default, "help": spec.help_text(),
                                "show_default": spec.default is not None}
    if spec.kind is bool and spec.validator is None:
        keywords = {"is_flag": True, "default": bool(spec.default), "help": spec.help_text(),
                    "show_default": "/" in "".join(spelled_as)}
    if spec.metavar and spec.choices is None and "metavar" not in overrides:
        keywords["metavar"] = spec.metavar
    if "help" in overrides and spec.choices is None:  # the command's words, and the declaration's constraint
        rule = spec.constraint()
        if rule and rule not in overrides["help"]:
            overrides["help"] = overrides["help"].rstrip(".") + f" ({rule})."
    keywords.update(overrides)
    return click.option(*spelled_as, dest or spec.name, **keywords)


def options(*specs: Option) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click options of several declarations, in this order."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for spec in reversed(specs):
            fn = option(spec)(fn)
        return fn

    return decorate


def statistics_options(test: Option | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """How runs are compared, the fields of :class:`ragrade.ComparisonOptions` but the baseline: ``--test``
    (``test``: the declaration, e.g. the gate's paired tests), ``--ci-method``, ``--correction``,
    ``--alpha``, ``--confidence``, ``--resamples``, ``--seed``."""
    from ragrade import options as o

    return options(test or o.TEST, o.CI_METHOD, o.CORRECTION, o.ALPHA, o.CONFIDENCE, o.N_RESAMPLES, o.SEED)


def comparison_of(kwargs: dict[str, Any], baseline: str | None = None) -> Any:
    """The :class:`ragrade.ComparisonOptions` of a command's options (taken out of ``kwargs``), with
    ``baseline`` (a run name) as its baseline."""
    from ragrade.options import ComparisonOptions

    kwargs.pop("baseline", None)
    return ComparisonOptions.take(kwargs).replace(baseline=baseline)
