"""Issue 34, item 9: a metric string holding a digit other than 0-9 (fullwidth ``ndcg@１０``, Arabic-Indic
``P@٥``, superscripts) is refused, naming the character: Python's int() reads such digits, so ``ndcg@１０``
was silently ``ndcg@10``."""

from __future__ import annotations

import unicodedata

import pytest
from click.testing import CliRunner

from ragrade.cli import main
from ragrade.errors import MetricError
from ragrade.metrics import Metric, parse_metric, parse_metrics

DIGITS = ["１", "٥", "۵", "५", "²", "\u0e51"]  # fullwidth, Arabic-Indic, Persian, Devanagari, superscript, Thai
SHAPES = ["ndcg@1{d}", "P@{d}", "recall@[5,1{d}]", "ndcg(rel={d})@10", "rbp(p=0.{d})", "ndcg_cut_1{d}", "P_{d}",
          "P.{d}", "success@{d}", "map@1{d}0"]


@pytest.mark.parametrize("digit", DIGITS)
@pytest.mark.parametrize("shape", SHAPES)
def test_non_ascii_digits_are_refused(digit, shape):
    text = shape.format(d=digit)
    for parse in (parse_metric, parse_metrics):
        with pytest.raises(MetricError) as info:
            parse(text)
        assert repr(digit) in str(info.value) and unicodedata.name(digit) in str(info.value)


def test_metric_make_refuses_them_too():
    with pytest.raises(MetricError, match="FULLWIDTH DIGIT TWO"):
        Metric.make("ndcg", 10, rel="２")
    assert str(Metric.make("ndcg", 10, rel="2")) == "ndcg(rel=2)@10"


def test_ascii_spellings_still_parse():
    assert str(parse_metric("ndcg@10")) == "ndcg@10"
    assert str(parse_metric("ndcg_cut_10")) == "ndcg@10"
    assert [str(m) for m in parse_metrics("recall@[5,10]")] == ["recall@5", "recall@10"]


def test_the_command_line_refuses_them(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\n")
    r = tmp_path / "r.txt"
    r.write_text("q1 Q0 d1 1 0.5 x\n")
    res = CliRunner().invoke(main, ["evaluate", str(q), str(r), "-m", "ndcg@１０"])
    assert res.exit_code == 2 and "FULLWIDTH DIGIT ONE" in res.output
