"""The synthesis task set (prompts, schemas, reply readers) and the passages and their stratified order."""

from __future__ import annotations

import json

import pytest

from ragrade.errors import InputError
from ragrade.llm.tasks import OutputError
from ragrade.spans.model import Corpus
from ragrade.synthesis import prompts
from ragrade.synthesis.generate import parse_mix, targets
from ragrade.synthesis.sample import Passages

from . import scripted


def test_replies_are_read_leniently_where_nothing_is_lost():
    reply = 'Sure!\n```json\n{"question": " What  is\\nit? ", "answer": "x", "excerpts": ["a b c", {"passage": 2, "text": "d"}]}\n```'
    out = prompts.parse_question(reply)
    assert out == {"question": "What is it?", "answer": "x",
                   "excerpts": [{"passage": 0, "text": "a b c"}, {"passage": 2, "text": "d"}]}
    assert prompts.parse_question('{"question": "Q?", "excerpts": "one"}')["excerpts"] == [{"passage": 0, "text": "one"}]


@pytest.mark.parametrize("reply, why", [
    ('{"question": "broken', "no JSON"),
    ('{"question": "   ", "answer": "", "excerpts": ["x"]}', "no question"),
    ('{"question": "Q?", "answer": "", "excerpts": []}', "no excerpt"),
    ('{"question": "Q?", "answer": "", "excerpts": ["  ", {"text": ""}]}', "no excerpt"),
    ('["a list"]', "not a JSON object"),
    ('{"question": "' + "x" * 700 + '", "excerpts": ["y"]}', "longer than"),
])
def test_broken_replies_are_output_errors(reply, why):
    with pytest.raises(OutputError):
        prompts.parse_question(reply)


def test_answerability_replies():
    assert prompts.parse("answerability", '{"answerable": true}') == {"answerable": 1}
    assert prompts.parse("answerability", '{"answerable": "no"}') == {"answerable": 0}
    with pytest.raises(OutputError):
        prompts.parse("answerability", '{"answerable": "maybe"}')


def test_messages_schemas_and_hashes():
    inputs = {"passage_1": "P one.", "title_1": "doc-a", "passage_2": "P two.", "title_2": "doc-b", "persona": "a nurse",
              "max_excerpts": "5"}
    for kind, task in prompts.KIND_TASK.items():
        msgs = prompts.messages(task, inputs)
        assert msgs[0]["role"] == "system" and "P one." in msgs[1]["content"]
        assert "Ask as a nurse would ask" in msgs[1]["content"]
        assert (kind == "single") == ("P two." not in msgs[1]["content"])
        assert scripted.task_of(msgs[1]["content"]) == kind
        assert prompts.schema(task)["required"] == ["question", "answer", "excerpts"]
    assert prompts.schema("nothing") is None
    hashes = prompts.prompt_hashes()
    assert set(hashes) == set(prompts.TASKS) and len(set(hashes.values())) == len(hashes)
    assert prompts.TASK_SET.prompt_version == prompts.PROMPT_VERSION
    json.dumps(prompts.QUESTION_SCHEMA)


def test_mix_and_targets():
    assert parse_mix(None) == {"single": 0.5, "multi": 0.25, "abstract": 0.25}
    assert parse_mix("single=2,multi=1,abstract=1") == {"single": 0.5, "multi": 0.25, "abstract": 0.25}
    assert parse_mix({"single": 1}) == {"single": 1.0, "multi": 0.0, "abstract": 0.0}
    for bad in ("single=x", "triple=1", "single=0", "single", "single=-1", {}):
        with pytest.raises(InputError):
            parse_mix(bad)
    for n in range(1, 40):
        t = targets(n, parse_mix(None))
        assert sum(t.values()) == n
        assert all(abs(t[k] - n * s) < 1 for k, s in parse_mix(None).items())
    assert targets(10, parse_mix(None)) == {"single": 5, "multi": 3, "abstract": 2}


def _corpus() -> Corpus:
    return Corpus(scripted.corpus(paragraphs=5))


def test_passages_cover_every_document_and_are_document_text():
    c = _corpus()
    ps = Passages(c, 500, 100)
    for p in ps.items:
        assert c[p.doc][p.start:p.end] == p.text and len(p.text) <= 500
    assert {p.doc for p in ps.items} == set(c)


def test_the_order_is_seeded_stratified_and_complete():
    ps = Passages(_corpus(), 500, 100)
    a, b = ps.order(0, 1), ps.order(0, 1)
    assert [p.pid for p in a] == [p.pid for p in b]
    assert sorted(p.pid for p in a) == sorted(p.pid for p in ps.eligible)
    assert [p.pid for p in ps.order(1, 1)] != [p.pid for p in a]
    docs = len({p.doc for p in ps.eligible})
    assert len({p.doc for p in a[:docs]}) == docs  # every document before any second passage


def test_pairs_join_different_documents_once():
    ps = Passages(_corpus(), 500, 100)
    pairs = [pp for pp, _ in ps.pairs(0, "multi", ("x", "y"))]
    assert pairs and all(a.doc != b.doc for a, b in pairs)
    keys = [tuple(sorted((a.pid, b.pid))) for a, b in pairs]
    assert len(keys) == len(set(keys))
    personas = [p for _, p in ps.pairs(0, "multi", ("x", "y"))]
    assert personas[:4] == ["x", "y", "x", "y"]


def test_singles_repeat_a_passage_only_with_another_persona():
    ps = Passages(_corpus(), 500, 100)
    seen = [(pp[0].pid, persona) for pp, persona in ps.singles(0, ("a", "b"))]
    assert len(seen) == 2 * len(ps.eligible) and len(set(seen)) == len(seen)
    assert len(list(ps.singles(0))) == len(ps.eligible)


def test_bad_passage_sizes():
    with pytest.raises(InputError):
        Passages(_corpus(), 50, 100)
    with pytest.raises(InputError, match="no passage"):
        Passages(Corpus({"a": "short"}), 500, 100)
