"""The metric-string parser: every name of issue 2 parses (case-insensitively, with aliases), ``str()``
round-trips, typos suggest the nearest name, bad parameters name the parameter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragrade import MetricError, UnknownNameError
from ragrade.metrics import REGISTRY, Metric, lookup, parse_metric, parse_metrics
from reference import PROPERTY_SETTINGS

ISSUE_STRINGS = {
    "ndcg@10": [("ndcg", 10, ())],
    "ndcg(gain=exp)@10": [("ndcg", 10, (("gain", "exp"),))],
    "map@100": [("ap", 100, ())],
    "ap@100": [("ap", 100, ())],
    "mrr@10": [("rr", 10, ())],
    "rr": [("rr", None, ())],
    "recall@100": [("recall", 100, ())],
    "P@10": [("precision", 10, ())],
    "precision@10": [("precision", 10, ())],
    "hit_rate@10": [("hit_rate", 10, ())],
    "success@10": [("hit_rate", 10, ())],
    "f1@10": [("f1", 10, ())],
    "recall_all@10": [("recall_all", 10, ())],
    "r_precision": [("r_precision", None, ())],
    "context_precision@10": [("context_precision", 10, ())],
    "precision(rel=2)@5": [("precision", 5, (("rel", 2),))],
    "recall@[1,5,10]": [("recall", 1, ()), ("recall", 5, ()), ("recall", 10, ())],
}


def _cases(text: str) -> list[str]:
    return [text, text.upper(), text.lower(), text.swapcase(), text.title()]


@pytest.mark.parametrize("text", list(ISSUE_STRINGS))
def test_issue_strings_parse_case_insensitively(text):
    want = [Metric(n, k, p) for n, k, p in ISSUE_STRINGS[text]]
    for variant in _cases(text):
        assert parse_metrics(variant) == want, variant


@pytest.mark.parametrize("text", list(ISSUE_STRINGS))
def test_str_round_trips(text):
    for m in parse_metrics(text):
        assert parse_metric(str(m)) == m
        assert Metric.parse(str(m)) == m


def test_default_parameters_are_not_kept():
    """Writing a default value gives the same metric as leaving it out (so equality is canonical)."""
    assert parse_metric("ndcg(gain=linear)@10") == parse_metric("ndcg@10")
    assert parse_metric("P(rel=1)@5") == parse_metric("P@5")
    assert str(parse_metric("NDCG(Gain=Exp)@10")) == "ndcg(gain=exp)@10"


def test_trec_eval_style_names():
    assert parse_metric("ndcg_cut_10") == parse_metric("ndcg@10")
    assert parse_metric("P_5") == parse_metric("precision@5")
    assert parse_metric("map_cut_100") == parse_metric("ap@100")
    assert parse_metric("success_10") == parse_metric("hit_rate@10")


def test_cutoff_list_expands_with_user_labels():
    from ragrade.metrics import expand_labels

    assert [(lbl, str(m)) for lbl, m in expand_labels("P@[5,10]")] == [("P@5", "precision@5"),
                                                                      ("P@10", "precision@10")]


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [("ndgc@10", "ndcg"), ("recal@5", "recall"), ("precison@5", "precision"), ("hit_rat@3", "hit_rate"),
     ("r_precison", "r_precision"), ("contxt_precision@3", "context_precision")],
)
def test_typos_suggest_the_nearest_name(typo, suggestion):
    with pytest.raises(UnknownNameError, match=f"Did you mean.*'{suggestion}'"):
        parse_metrics(typo)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("r_precision@10", "no cutoff"),
        ("ndcg@0", "cutoff"),
        ("ndcg@x", "cutoff"),
        ("recall@1,5", "brackets"),
        ("recall@[]", "empty cutoff list"),
        ("ndcg(foo=1)@10", "no parameter 'foo'"),
        ("ndcg(gain)@10", "key=value"),
        ("P(rel=2,rel=3)@5", "twice"),
        ("ndcg@10@5", "cutoff"),
        ("ndcg@@10", "cannot parse|cutoff"),
        ("@10", "cannot parse"),
        ("P@[5,10]", None),  # fine with parse_metrics, not with Metric.parse (two metrics)
    ],
)
def test_malformed_strings_raise_metric_error(text, fragment):
    if fragment is None:
        assert len(parse_metrics(text)) == 2
        with pytest.raises(MetricError, match="2 metrics"):
            Metric.parse(text)
        return
    with pytest.raises(MetricError, match=fragment):
        parse_metrics(text)


def test_non_string_is_an_error():
    with pytest.raises(MetricError):
        parse_metrics(10)  # type: ignore[arg-type]


# -- properties over the registry ------------------------------------------------------------------
def _value(spec):
    if spec.choices is not None:
        return st.sampled_from(spec.choices)
    if spec.kind is bool:
        return st.booleans()
    if spec.kind is dict:
        return st.just(((0, 1.0), (1, 2.0), (2, 5.0)))  # canonical: no grade mapped to itself
    if spec.kind is int:
        lo = int(spec.minimum) if spec.minimum is not None else -5
        return st.integers(lo, int(spec.maximum) if spec.maximum is not None else lo + 20)
    if spec.kind is float:
        lo = spec.minimum if spec.minimum is not None else -5.0
        hi = spec.maximum if spec.maximum is not None else lo + 20
        return st.floats(lo, hi, allow_nan=False, exclude_min=spec.open_minimum, exclude_max=spec.open_maximum)
    if spec.pattern is not None:  # levels of iprec_11pt: numbers separated by ';'
        return st.lists(st.sampled_from(["0.1", "0.25", "0.5", "1.0", ".75"]), min_size=1, max_size=4).map(";".join)
    return st.text("abcdefghij", min_size=1, max_size=6)


@st.composite
def metric_specs(draw):
    """(definition, cutoff, params) drawn from the registry's Params (a required cutoff or level is set)."""
    d = draw(st.sampled_from(REGISTRY))
    if d.cutoff == "none":
        k = None
    elif d.cutoff == "required":
        k = draw(st.integers(1, 1000))
    else:
        k = draw(st.none() | st.integers(1, 1000))
    params = {}
    for spec in d.params:
        if draw(st.booleans()) or spec.name == d.at_param:
            params[spec.name] = draw(_value(spec))
    if "gains" in params and params.get("gain", "linear") != "linear":
        del params["gains"]
    return d, k, params


def _text(name, k, params, d=None):
    out = name
    if params:
        def show(key, value):
            spec = d.param(key) if d is not None else None
            return spec.format(value) if spec is not None else value
        out += "(" + ",".join(f"{key}={show(key, value)}" for key, value in params.items()) + ")"
    return out + ("" if k is None else f"@{k}")


@PROPERTY_SETTINGS
@given(metric_specs(), st.data())
def test_generated_metrics_round_trip(spec, data):
    d, k, params = spec
    alias = data.draw(st.sampled_from((d.name, *d.aliases)))
    m = Metric.make(d.name, k, **params)
    assert m.name == d.name and m.k == k
    for key, value in params.items():
        assert m.get(key) == value
    assert parse_metric(str(m)) == m
    text = _text(alias, k, params, d)
    assert parse_metric(text) == m
    assert parse_metric(text.upper()) == m


def _bad_values(spec):
    """Values that violate ``spec`` (from its kind, minimum and choices)."""
    bad = []
    if spec.kind in (int, float):
        bad.append("abc")
    if spec.kind is int:
        bad.append("1.5")
    if spec.minimum is not None:
        bad.append(str(int(spec.minimum) - 1) if spec.kind is int else str(spec.minimum - 0.5))
    if spec.choices is not None:
        bad.append("not_a_choice")
    return bad


BAD = [(d.name, spec, v) for d in REGISTRY for spec in d.params for v in _bad_values(spec)]


@pytest.mark.parametrize(("name", "spec", "value"), BAD, ids=[f"{n}-{s.name}-{v}" for n, s, v in BAD])
def test_bad_parameter_values_name_the_parameter(name, spec, value):
    fam = lookup(name)
    with pytest.raises(MetricError, match=f"'{spec.name}'"):
        parse_metrics(f"{name}({spec.name}={value})@5" if fam.cutoff != "none" else f"{name}({spec.name}={value})")
    with pytest.raises(MetricError, match=f"'{spec.name}'"):
        Metric.make(name, **{spec.name: value})


def test_every_registry_name_and_alias_is_unique_and_parses():
    seen = {}
    for d in REGISTRY:
        for alias in (d.name, *d.aliases):
            assert seen.setdefault(alias.lower(), d.name) == d.name
            if d.at_param is not None:
                text = f"{alias}@0.5"
            elif d.cutoff == "required":
                text = f"{alias}@10"
            else:
                text = alias
            found = parse_metrics(text)  # a trec_eval family name may stand for several cutoffs
            assert found and {m.name for m in found} == {d.name}, (alias, found)


def test_spaces_and_parameter_order_do_not_matter():
    assert parse_metric(" P ( rel = 2 ) @ 5 ") == parse_metric("P(rel=2)@5")
    assert parse_metric("ndcg(rel=2,gain=exp)@3") == parse_metric("ndcg(gain=exp,rel=2)@3")
    assert str(parse_metric("ndcg(rel=2,gain=exp)@3")) == "ndcg(gain=exp,rel=2)@3"  # registry order
    assert [str(m) for m in parse_metrics("recall@[1, 5, 10]")] == ["recall@1", "recall@5", "recall@10"]


def test_ndcg_rel_is_a_distinct_variant_from_the_default():
    """``ndcg`` without rel counts every positive grade; ``ndcg(rel=1)`` drops grades below 1 (e.g. 0.5)."""
    assert parse_metric("ndcg(rel=1)@3") != parse_metric("ndcg@3")
    assert parse_metric("ndcg@3").get("rel") is None


@st.composite
def bad_parameters(draw):
    """(metric name, parameter name, value) with the value outside the ParamSpec's constraint."""
    specs = [(d, p) for d in REGISTRY for p in d.params]
    d, spec = draw(st.sampled_from(specs))
    options = [st.sampled_from([v for v in spec.bad_values() if isinstance(v, str) and v not in ("", "??")]
                               or ["?x"])]
    if spec.minimum is not None:
        options.append(st.integers(max_value=int(spec.minimum) - 1).map(str))
    if spec.kind is int:
        options.append(st.floats(0.01, 99, allow_nan=False).filter(lambda x: not x.is_integer()).map(repr))
    if spec.choices is not None:
        options.append(st.text("xyzqw", min_size=1, max_size=5).filter(lambda v: v not in spec.choices))
    return d.name, spec.name, draw(st.one_of(options))


@PROPERTY_SETTINGS
@given(bad_parameters())
def test_generated_bad_parameters_name_the_parameter(case):
    name, param, value = case
    fam = lookup(name)
    cut = "@5" if fam.cutoff == "required" else ""
    with pytest.raises(MetricError, match=f"'{param}'"):
        parse_metrics(f"{name}({param}={value}){cut}")


def test_every_family_has_a_source_a_formula_and_an_example_that_parses():
    for d in REGISTRY:
        assert d.source and d.formula and d.summary, d.name
        found = parse_metrics(d.example())
        assert found and {m.name for m in found} == {d.name}, d.name
