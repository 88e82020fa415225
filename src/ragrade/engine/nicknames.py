"""trec_eval's nicknames (``all_trec``, ``official``, ``set``) as the profile in use has them.

trec_eval 10 added ``unj``, ``rbp`` and ``rbp_resid`` to ``all_trec``; pytrec_eval is built on trec_eval 9,
whose ``all_trec`` has none of them. Under a profile of trec_eval 9 that reads trec_eval's names (the
``pytrec_eval`` profile: ``names="trec_eval"``, ``iprec_cut="trec9"``), a nickname therefore stands for trec_eval
9's set, as the pytrec_eval drop-in (:mod:`ragrade.compat.pytrec_eval`) reads it; under every other profile, for
trec_eval 10's. A measure written by its own name is left as written. docs/profiles.md ("pytrec_eval") says so.
"""

from __future__ import annotations

from typing import Any

from ragrade.metrics.registry import TREC_BY_NAME, TREC_NICKNAMES


def reads_trec_eval_9(profile: Any) -> bool:
    """Whether ``profile`` (a name or a :class:`~ragrade.profiles.Profile`; None: no profile) reads trec_eval's
    names as trec_eval 9 has them. An unknown name is False here (the plan reports it)."""
    if profile is None:
        return False
    from ragrade.profiles import PROFILES, EngineProfile

    if isinstance(profile, str):
        from ragrade.profiles import ALIASES

        key = profile.strip().lower()
        profile = PROFILES.get(ALIASES.get(key, key))
    return isinstance(profile, EngineProfile) and profile.names == "trec_eval" and profile.iprec_cut == "trec9"


def trec9_members(nickname: str) -> list[str]:
    """The measures of a nickname that trec_eval 9 has, in trec_eval's order."""
    return [n for n in TREC_NICKNAMES[nickname] if TREC_BY_NAME[n].version < 10]


def profile_metrics(metrics: Any, profile: Any) -> Any:
    """``metrics`` (any metric argument of :func:`ragrade.evaluate`) with each nickname string replaced by its
    trec_eval 9 members when ``profile`` reads trec_eval 9 (:func:`reads_trec_eval_9`); else unchanged."""
    if not reads_trec_eval_9(profile):
        return metrics
    items = [metrics] if isinstance(metrics, str) else metrics
    if not isinstance(items, list | tuple) or not any(isinstance(m, str) and m.strip() in TREC_NICKNAMES
                                                     for m in items):
        return metrics
    out: list[Any] = []
    for m in items:
        out += trec9_members(m.strip()) if isinstance(m, str) and m.strip() in TREC_NICKNAMES else [m]
    return out
