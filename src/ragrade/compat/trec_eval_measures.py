"""trec_eval 10's measures for the drop-in (:mod:`ragrade.compat.trec_eval`): their table in the order trec_eval
computes and prints them (kinds, default parameters), and its nicknames (``all_trec``, ``official``...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover

    pass

VERSION = "10.0-rc3"


# -- trec_eval's measures, in the order it computes and prints them -------------------------------------------

#: How a measure's values print and aggregate (trec_eval's init/print procedures).
#: ``double``: one value; ``long``: one count (``%ld``); ``gm``: geometric mean, no per-query line;
#: ``count_q``: num_q; ``cut_long`` / ``cut_double``: one value per parameter (sorted); ``double_p``: one value
#: whose name carries the parameters when given; ``relstring``, ``runid``: text.
@dataclass(frozen=True)
class Measure:
    name: str
    kind: str
    default: str = ""  # the default parameters, as trec_eval would write them after the dot
    supported: bool = True
    base: str = ""  # judgment-group measures: the measure averaged over the groups (map, P, Rprec_mult)


_OFFICIAL_CUTS = "5,10,15,20,30,100,200,500,1000"
_ELEVEN = "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0"

MEASURES: tuple[Measure, ...] = (
    Measure("runid", "runid"),
    Measure("num_q", "count_q"),
    Measure("num_ret", "long"),
    Measure("num_rel", "long"),
    Measure("num_rel_ret", "long"),
    Measure("map", "double"),
    Measure("gm_map", "gm"),
    Measure("Rprec", "double"),
    Measure("bpref", "double"),
    Measure("recip_rank", "double"),
    Measure("iprec_at_recall", "cut_double", _ELEVEN),
    Measure("P", "cut_long", _OFFICIAL_CUTS),
    Measure("relstring", "relstring", "10"),
    Measure("recall", "cut_long", _OFFICIAL_CUTS),
    Measure("infAP", "double"),
    Measure("gm_bpref", "gm"),
    Measure("Rprec_mult", "cut_double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0"),
    Measure("utility", "double_p", "1,-1,0,0"),
    Measure("11pt_avg", "double_p", _ELEVEN),
    Measure("binG", "double"),
    Measure("G", "double_p"),
    Measure("dcg", "double_p"),
    Measure("ideal_dcg", "double_p"),
    Measure("ndcg", "double_p"),
    Measure("ndcg_rel", "double_p"),
    Measure("Rndcg", "double_p"),
    Measure("ndcg_cut", "cut_long", _OFFICIAL_CUTS),
    Measure("map_cut", "cut_long", _OFFICIAL_CUTS),
    Measure("relative_P", "cut_long", _OFFICIAL_CUTS),
    Measure("success", "cut_long", "1,5,10"),
    Measure("set_P", "double"),
    Measure("set_relative_P", "double"),
    Measure("set_recall", "double"),
    Measure("set_map", "double"),
    Measure("set_F", "double_p", "1.0"),
    Measure("num_nonrel_judged_ret", "long"),
    *(Measure(f"prefs_{n}", "long") for n in ("num_prefs_poss", "num_prefs_ful", "num_prefs_ful_ret")),
    *(Measure(f"prefs_{n}", "double") for n in (  # -R prefs, qrels_prefs: compat/trec_eval_prefs.py
        "simp", "pair", "avgjg", "avgjg_Rnonrel", "simp_ret", "pair_ret", "avgjg_ret", "avgjg_Rnonrel_ret",
        "simp_imp", "pair_imp", "avgjg_imp")),
    Measure("map_avgjg", "double", base="map"),
    Measure("P_avgjg", "cut_long", _OFFICIAL_CUTS, base="P"),
    Measure("Rprec_mult_avgjg", "cut_double", "0.2,0.4,0.6,0.8,1.0,1.2,1.4,1.6,1.8,2.0", base="Rprec_mult"),
    Measure("yaap", "double"),
    Measure("rbp", "double_p"),
    Measure("rbp_resid", "double_p"),
    Measure("unj", "cut_long", "5,10,20"),
)
BY_NAME = {m.name: m for m in MEASURES}

NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP",
                 "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
                 "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P", "set_map",
                 "set_F", "num_nonrel_judged_ret"),
    "all_prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
                  "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
                  "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                  "prefs_pair_imp", "prefs_avgjg_imp"),
    "prefs": ("runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
              "prefs_simp", "prefs_pair", "prefs_avgjg"),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
