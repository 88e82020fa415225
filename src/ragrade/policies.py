"""Named policies for undefined and messy cases (``docs/conventions.md``, "Policies").

Every case that has no single right answer is a named option with a documented default; when a case
occurs, ragrade counts it in the result summary and emits a :class:`~ragrade.errors.RagradeWarning`
(unless the policy is ``"error"``, which raises :class:`~ragrade.errors.PolicyError`).

==================  ===============================================  =====================================
policy              default                                          options
==================  ===============================================  =====================================
``missing_run``     ``"zero"``: a query in the ground truth with no  ``"drop"`` (pytrec_eval/BEIR:
                    entry in the run scores 0 and is counted         not scored, not counted), ``"error"``
``missing_qrels``   ``"ignore"``: a query only in the run is left    ``"error"``
                    out, and reported
``no_relevant``     ``"skip"``: a query with R = 0 (at the metric's  ``"zero"`` (trec_eval), ``"nan"``
                    relevance level) is NaN and left out of means    (the mean becomes NaN), ``"error"``
``duplicates``      ``"credit_once"``: a repeated item stays in the  ``"drop"`` (later copies removed),
                    list but earns nothing after its first rank      ``"keep_last"`` (the last line's
                                                                     score wins: ranx/ir-measures),
                                                                     ``"error"`` (trec_eval)
``identical_ids``   ``"keep"``                                       ``"drop"``: items whose id equals
                                                                     the query id are removed from the
                                                                     run (BEIR), never from your data
``ties``            ``"docid_desc"``: equal scores ranked by         ``"input"`` (stable), ``"docid_asc"``
                    document id descending (trec_eval)
``empty_run``       ``"zero"``: an empty retrieved list scores 0     ``"error"``
``unjudged``        ``"nonrelevant"``: a retrieved document without  ``"condensed"`` (unjudged and
                    a judgment counts as non-relevant (trec_eval)    negative-grade documents are removed
                                                                     before scoring: Sakai's condensed
                                                                     lists, trec_eval -J, ir-measures
                                                                     judged_only), ``"bounds"`` (the
                                                                     values as the lower bound, plus an
                                                                     upper bound with every unjudged
                                                                     document relevant at
                                                                     ``upper_grade``)
==================  ===============================================  =====================================

Three numeric settings sit next to the policies, all unset by default (trec_eval's options):

* ``max_docs`` (trec_eval ``-M``): only the first ``max_docs`` documents of each ranking are read;
* ``num_docs`` (trec_eval ``-N``): the collection size, needed by ``utility``'s fourth coefficient;
* ``upper_grade``: the grade an unjudged document takes in the upper bound of ``unjudged="bounds"``
  (unset: the highest grade in the ground truth).
"""

from __future__ import annotations

import math
import numbers
import typing
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from ragrade.errors import PolicyError, UnknownNameError

MissingRun = Literal["zero", "drop", "error"]
MissingQrels = Literal["ignore", "error"]
NoRelevant = Literal["skip", "zero", "nan", "error"]
Duplicates = Literal["credit_once", "drop", "keep_last", "error"]
IdenticalIds = Literal["keep", "drop"]
Ties = Literal["docid_desc", "input", "docid_asc"]
EmptyRun = Literal["zero", "error"]
Unjudged = Literal["nonrelevant", "condensed", "bounds"]


@dataclass(frozen=True)
class Policies:
    """The policy settings of one evaluation (immutable). See the module docstring for meanings.

    >>> Policies(no_relevant="zero").no_relevant
    'zero'
    """

    missing_run: MissingRun = "zero"
    missing_qrels: MissingQrels = "ignore"
    no_relevant: NoRelevant = "skip"
    duplicates: Duplicates = "credit_once"
    identical_ids: IdenticalIds = "keep"
    ties: Ties = "docid_desc"
    empty_run: EmptyRun = "zero"
    unjudged: Unjudged = "nonrelevant"
    max_docs: int | None = None
    num_docs: int | None = None
    upper_grade: float | None = None

    def __post_init__(self) -> None:
        for name, choices in _CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise PolicyError(f"policy {name!r} must be one of {', '.join(map(repr, choices))}; got {value!r}")
        for name in ("max_docs", "num_docs"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Integral)
                                      or value < (1 if name == "max_docs" else 0)):
                raise PolicyError(f"{name} must be a {'positive' if name == 'max_docs' else 'non-negative'} "
                                  f"integer; got {value!r}")
        ug = self.upper_grade
        if ug is not None and (isinstance(ug, bool) or not isinstance(ug, numbers.Real)
                               or not math.isfinite(float(ug)) or float(ug) <= 0):
            raise PolicyError(f"upper_grade must be a positive number; got {ug!r}")

    def update(self, **changes: Any) -> Policies:
        """A copy with some policies changed (``None`` values are ignored); an unknown policy name is an
        :class:`~ragrade.errors.UnknownNameError` suggesting the nearest."""
        names = [f.name for f in fields(Policies)]
        unknown = [k for k in changes if k not in names]
        if unknown:
            raise UnknownNameError("policy", unknown[0], names, hint=f"Policies: {', '.join(names)}.")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @staticmethod
    def choices() -> dict[str, tuple[str, ...]]:
        """Every named policy with its allowed values (the first is the default); the numeric settings
        (``max_docs``, ``num_docs``, ``upper_grade``) are not listed."""
        return dict(_CHOICES)

    @staticmethod
    def settings() -> tuple[str, ...]:
        """The numeric settings next to the policies."""
        return tuple(f.name for f in fields(Policies) if f.name not in _CHOICES)


_HINTS = typing.get_type_hints(Policies)
_CHOICES: dict[str, tuple[str, ...]] = {
    f.name: typing.get_args(_HINTS[f.name]) for f in fields(Policies)
    if typing.get_origin(_HINTS[f.name]) is Literal
}
