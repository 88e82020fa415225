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
==================  ===============================================  =====================================
"""

from __future__ import annotations

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

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in _CHOICES[f.name]:
                raise PolicyError(
                    f"policy {f.name!r} must be one of {', '.join(map(repr, _CHOICES[f.name]))}; got {value!r}"
                )

    def update(self, **changes: Any) -> Policies:
        """A copy with some policies changed (``None`` values are ignored); an unknown policy name is an
        :class:`~ragrade.errors.UnknownNameError` suggesting the nearest."""
        unknown = [k for k in changes if k not in _CHOICES]
        if unknown:
            raise UnknownNameError("policy", unknown[0], _CHOICES, hint=f"Policies: {', '.join(_CHOICES)}.")
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @staticmethod
    def choices() -> dict[str, tuple[str, ...]]:
        """Every policy with its allowed values (the first is the default)."""
        return dict(_CHOICES)


_CHOICES: dict[str, tuple[str, ...]] = {
    f.name: typing.get_args(typing.get_type_hints(Policies)[f.name]) for f in fields(Policies)
}
