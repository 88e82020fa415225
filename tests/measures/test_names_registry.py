"""Every name the registry accepts round-trips: ``parse(str(m)) == m`` for each family under each of its
aliases; each trec_eval name (bare, and every output name it produces) parses back to the metric it
labels; ir-measures' spellings (as ``str()`` of ir-measures' own parsed measures) and ranx's names parse to
the same metric as ragrade's spelling of it."""

from __future__ import annotations

import pytest

from ragrade.metrics import REGISTRY, Metric, parse_labelled, parse_metric
from ragrade.metrics.registry import TREC, TREC_NICKNAMES

FAMILY_ALIASES = [(f.name, alias) for f in REGISTRY for alias in f.names]


@pytest.mark.parametrize(("family", "alias"), FAMILY_ALIASES, ids=[f"{f}-{a}" for f, a in FAMILY_ALIASES])
def test_every_alias_round_trips(family, alias):
    fam = next(f for f in REGISTRY if f.name == family)
    example = parse_metric(fam.example())
    text = fam.example().replace(fam.example().split("(")[0].split("@")[0], alias, 1)
    m = parse_metric(text)
    assert m == example and m.name == family
    assert parse_metric(str(m)) == m and Metric.parse(str(m)) == m


TREC_TEXTS = [t.name for t in TREC] + list(TREC_NICKNAMES)


@pytest.mark.parametrize("text", TREC_TEXTS)
@pytest.mark.parametrize("names", ["trec_eval", "ragrade"])
def test_trec_eval_names_and_their_output_names_round_trip(text, names):
    labelled = parse_labelled(text, names)
    assert labelled
    for label, m in labelled:
        assert parse_metric(str(m)) == m
        # a nickname's members are trec_eval's (its rbp is p = 0.9 under either setting)
        again = parse_labelled(label, "trec_eval" if text in TREC_NICKNAMES else names)
        assert again == [(label, m)], (text, label, again)


DOTTED = ["P.5,10", "recall.7", "ndcg_cut.5,10", "map_cut.3", "iprec_at_recall.0.25", "Rprec_mult.0.5,3",
          "relative_P.4", "success.2", "unj.3", "ndcg.1=3.5,2=9", "ndcg_rel.1=2", "Rndcg.2=5", "G.1=1,2=4",
          "rbp.p=0.5", "rbp_resid.p=0.7", "utility.2,-1,0,0", "set_F.0.5"]


@pytest.mark.parametrize("text", DOTTED)
def test_dotted_forms_round_trip_through_their_output_names(text):
    for label, m in parse_labelled(text, "trec_eval"):
        assert parse_labelled(label, "trec_eval") == [(label, m)]
        assert parse_metric(str(m)) == m


IR_MEASURES = ["nDCG@10", "nDCG", "P(rel=2)@5", "P@5", "R@100", "AP", "AP(rel=2)@100", "RR", "RR@10", "Rprec",
               "Bpref", "infAP", "Judged@10", "ERR@20", "RBP(p=0.8)", "RBP(p=0.5,rel=2)", "alpha_nDCG@20",
               "alpha_nDCG(alpha=0.3)@10", "ERR_IA@20", "SDCG@10", "INST", "INST(T=2)", "INSQ", "BPM(T=2)@10",
               "NERR8@10", "NERR9@10", "NERR10", "NERR10(p=0.5)", "NERR11(T=3)", "Compat", "Compat(p=0.8)",
               "IPrec@0.5", "SetP", "SetR", "SetF", "SetF(beta=0.5)", "SetAP", "SetP(relative=True)", "NumQ",
               "NumRet", "NumRel", "NumRet(rel=1)", "Success@5", "Accuracy@5", "nDCG(gains={0:0,1:1,2:3})@10",
               "nDCG(judged_only=True)@10", "AP(judged_only=True)", "nDCG(dcg='exp-log2')@10"]


@pytest.mark.parametrize("text", IR_MEASURES)
def test_ir_measures_names_round_trip(text):
    m = parse_metric(text)
    assert parse_metric(str(m)) == m
    irm = pytest.importorskip("ir_measures")
    theirs = str(irm.parse_measure(text))  # ir-measures' canonical spelling parses to the same metric
    assert parse_metric(theirs) == m, (text, theirs)


RANX = {"ndcg@10": "ndcg@10", "ndcg_burges@10": "ndcg(gain=exp)@10", "dcg_burges@5": "dcg(gain=exp)@5",
        "map@100": "ap@100", "mrr@10": "rr@10", "precision@5": "precision@5", "recall@5": "recall@5",
        "f1@5": "f1@5", "r-precision": "r_precision", "hit_rate@5": "hit_rate@5", "hits@10": "hits@10",
        "bpref": "bpref", "rbp.95": "rbp(p=0.95)", "map@100-l2": "ap(rel=2)@100"}


@pytest.mark.parametrize("text", list(RANX))
def test_ranx_names(text):
    m = parse_metric(text)
    assert m == parse_metric(RANX[text]) and parse_metric(str(m)) == m
