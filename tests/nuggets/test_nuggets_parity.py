"""Parity with the reference implementations (test dependencies; installed by .ci/run):

* nuggetizer 0.0.5's ``calculate_nugget_scores`` and the vital-first ordering and cut of its ``create``;
* open-rag-eval 0.3.0's six nugget scores (``AutoNuggetMetric._evaluate_answer``, floors at 1 included) and
  its vital-first sort and cut to 20 (``_score_and_sort_nuggets``); its module is loaded on its own, with the
  LLM-client module it names replaced by a stub (the package's other metrics need PyTorch);
* erag's scores given the same per-document outputs, binary (any pytrec_eval measure) and graded (P, success).

On random nugget sets and assignments: every variant, topics with no vital or no okay nugget, partial
support, labels missing (not_support) and failed ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys
import types
import warnings

import pytest

import ragrade
from ragrade.nuggets import Assignment, Assignments, Nugget, Nuggets, score
from ragrade.nuggets.creation import CreateSettings, _finish, _Query
from ragrade.nuggets.scores import PROFILES, nuggetizer_scores, open_rag_eval_scores

TRIALS = 300


def need(module: str, why: str):
    """A reference library: skipped locally when it is missing, a failure in CI (``CI`` set), where .ci/run and
    the test extra install it."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=why)


LABELS = ("support", "partial_support", "not_support")


def _random_answer(rng: random.Random, trial: int) -> tuple[list[str], list[str]]:
    """(importance, label) lists of one answer: the first trials cover the edge cases."""
    n = [0, 1, 3, 5][trial] if trial < 4 else rng.randint(0, 25)
    kind = trial % 5
    if kind == 0:
        importance = ["vital"] * n  # no okay nugget
    elif kind == 1:
        importance = ["okay"] * n  # no vital nugget
    else:
        importance = [rng.choice(["vital", "okay"]) for _ in range(n)]
    pool = (*LABELS, "failed") if trial % 7 == 3 else LABELS
    labels = [rng.choice(pool) for _ in range(n)]
    return importance, labels


def test_nuggetizer_calculate_nugget_scores():
    metrics = need("nuggetizer.core.metrics", "nuggetizer is a test dependency")
    rng = random.Random(38)
    worst, compared = 0.0, 0
    for trial in range(TRIALS):
        importance, labels = _random_answer(rng, trial)
        theirs = metrics.calculate_nugget_scores("q", [{"importance": i, "assignment": a}
                                                       for i, a in zip(importance, labels, strict=True)])
        ours = nuggetizer_scores(importance, labels)
        for name in PROFILES["nuggetizer"]:
            worst = max(worst, abs(ours[name] - getattr(theirs, name)))
            compared += 1
    assert worst == 0.0 and compared == TRIALS * 4


def test_nuggetizer_profile_of_score_on_files_shape():
    metrics = need("nuggetizer.core.metrics", "nuggetizer is a test dependency")
    rng = random.Random(7)
    nuggets, rows, records = [], [], []
    for qi in range(40):
        importance, labels = _random_answer(rng, qi + 4)
        if not importance:
            continue
        q = f"q{qi}"
        record = []
        for j, (imp, lab) in enumerate(zip(importance, labels, strict=True)):
            nuggets.append(Nugget(q, f"n{j}", f"fact {j}", imp))
            if lab != "not_support" or rng.random() < 0.5:  # a missing label is not_support
                rows.append(Assignment(q, f"n{j}", lab))
            record.append({"importance": imp, "assignment": lab})
        records.append({"qid": q, "nuggets": record})
    frame = score(Nuggets(nuggets), Assignments(rows), "nuggetizer").set_index("query")
    for rec in records:
        theirs = metrics.calculate_nugget_scores(rec["qid"], rec["nuggets"])
        for name in PROFILES["nuggetizer"]:
            assert frame.loc[rec["qid"], name] == getattr(theirs, name)
    means = metrics.calculate_global_metrics(records)
    for name in PROFILES["nuggetizer"]:
        assert frame[name].mean() == pytest.approx(means[name], abs=1e-15)


@pytest.fixture
def autonugget(monkeypatch):
    """open-rag-eval's AutoNuggetMetric module, loaded alone (its LLM-client module replaced by a stub)."""
    spec = importlib.util.find_spec("open_rag_eval")
    if (spec is None or not spec.submodule_search_locations) and not os.environ.get("CI"):
        pytest.skip("open-rag-eval is a test dependency (pip install --no-deps open-rag-eval==0.3.0)")
    assert spec is not None and spec.submodule_search_locations, "open-rag-eval is not installed"
    root = next(iter(spec.submodule_search_locations))
    for name, sub in (("open_rag_eval.metrics", "metrics"), ("open_rag_eval.models", "models")):
        pkg = types.ModuleType(name)
        pkg.__path__ = [f"{root}/{sub}"]  # the package's directory, without its __init__ (it imports PyTorch)
        monkeypatch.setitem(sys.modules, name, pkg)
    judges = types.ModuleType("open_rag_eval.models.llm_judges")
    judges.LLMJudgeModel = type("LLMJudgeModel", (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "open_rag_eval.models.llm_judges", judges)
    monkeypatch.delitem(sys.modules, "open_rag_eval.metrics.autonugget_metric", raising=False)
    return importlib.import_module("open_rag_eval.metrics.autonugget_metric")


def test_open_rag_eval_six_scores_with_their_floors(autonugget):
    metric = autonugget.AutoNuggetMetric(model=None)
    rng = random.Random(380)
    worst, compared = 0.0, 0
    for trial in range(TRIALS):
        importance, labels = _random_answer(rng, trial)
        theirs = metric._evaluate_answer([f"n{i}" for i in range(len(labels))], importance, labels)
        ours = open_rag_eval_scores(importance, labels)
        assert set(theirs) == set(PROFILES["open_rag_eval"])
        for name, value in theirs.items():
            worst = max(worst, abs(ours[name] - value))
            compared += 1
    assert worst <= 1e-15 and compared == TRIALS * 6


def test_open_rag_eval_vital_first_and_cut_to_20(autonugget):
    rng = random.Random(9)

    class Model:  # answers the importance prompt with the labels chosen for this trial, 10 at a time
        def __init__(self, labels):
            self.labels = list(labels)

        def parse(self, prompt, response_format, model_kwargs):
            n = int(prompt.split("label each of the ", 1)[1].split()[0])
            batch, self.labels = self.labels[:n], self.labels[n:]
            return {"response": response_format(importance=batch), "metadata": {}}

    for _trial in range(60):
        n = rng.randint(1, 30)
        texts = [f"fact {i}" for i in range(n)]
        labels = [rng.choice(["vital", "okay"]) for _ in range(n)]
        metric = autonugget.AutoNuggetMetric(model=Model(labels))
        (theirs, their_labels), _ = metric._score_and_sort_nuggets("query", texts)
        st = _Query("q", "query", [["d"]], current=texts, labels=labels)
        ours = _finish(st, CreateSettings(keep=20), {})
        assert [x.text for x in ours] == list(theirs)
        assert [x.importance for x in ours] == [str(getattr(v, "value", v)) for v in their_labels]


def test_nuggetizer_create_procedure_gives_the_same_nuggets():
    """nuggetizer's create (windows of 10, the list capped at 30, labels 10 a call, vital first, the cut) and ours,
    asked of the same scripted model, give the same nuggets in the same order."""
    models = need("nuggetizer.models.nuggetizer", "nuggetizer is a test dependency")
    types_ = need("nuggetizer.core.types", "nuggetizer is a test dependency")
    import ast

    from ragrade.llm.base import Judgment
    from ragrade.nuggets import create

    def revise(current, passages):  # the 'model': append each passage's first word once, cap at 30
        return list(dict.fromkeys([*current, *(p.split()[0] for p in passages)]))[:30]  # (ours drops repeats)

    def label(nuggets):
        return ["vital" if sum(map(ord, t)) % 3 == 0 else "okay" for t in nuggets]

    class TheirLLM:
        def run(self, prompt, temperature):
            user = prompt[-1]["content"]
            if "Initial Nugget List:" in user:
                current = ast.literal_eval(user.split("Initial Nugget List: ", 1)[1].split("\n", 1)[0])
                ctx = user.split("Context:\n", 1)[1].split("\nSearch Query:", 1)[0]
                passages = [line.split("] ", 1)[1] for line in ctx.splitlines()]
                return repr(revise(current, passages)), 0
            nuggets = ast.literal_eval(user.split("Nugget List: ", 1)[1].split("\n", 1)[0])
            return repr(label(nuggets)), 0

    class OurJudge:
        name, model, prompt_version, cacheable, max_concurrency = "scripted", "m", "1", False, 1

        async def judge(self, task, inputs):
            import json

            if task == "nugget_create":
                passages = [line.split("] ", 1)[1] for line in inputs["passages"].splitlines()]
                return Judgment({"nuggets": revise(json.loads(inputs["nuggets"]), passages)})
            return Judgment({"labels": label(json.loads(inputs["nuggets"]))})

        async def aclose(self):
            return None

    rng = random.Random(5)
    for _trial in range(20):
        n = rng.randint(1, 45)
        words = [f"w{rng.randint(0, 60)}" for _ in range(n)]
        docs = {f"d{i:03d}": f"{w} is in passage {i}" for i, w in enumerate(words)}
        theirs_model = models.Nuggetizer.__new__(models.Nuggetizer)
        theirs_model.__dict__.update(creator_window_size=10, scorer_window_size=10, creator_max_nuggets=30,
                                     scorer_max_nuggets=20, log_level=0, creator_llm=TheirLLM(),
                                     scorer_llm=TheirLLM(), logger=__import__("logging").getLogger("t"))
        req = types_.Request(query=types_.Query(qid="q", text="query"),
                             documents=[types_.Document(docid=d, segment=t) for d, t in docs.items()])
        theirs = theirs_model.create(req)
        ours = create({"q": dict.fromkeys(docs, 2)}, {"q": "query"}, docs, judge=OurJudge(), cache=False)
        assert [(x.text, x.importance) for x in ours.nuggets.of("q")] == [(x.text, x.importance) for x in theirs]


# -- eRAG ---------------------------------------------------------------------------------------------------------

def _erag_case(rng: random.Random, graded: bool):
    queries = {f"q{i}": f"question number {i}" for i in range(12)}
    passages, run, outputs, gold = {}, {}, {}, {}
    for q, text in queries.items():
        docs = [f"{q}-d{j}" for j in range(rng.randint(5, 9))]
        run[q] = docs
        gold[q] = [f"answer{rng.randint(0, 3)}", "other"]
        for d in docs:
            passages[d] = f"text of {d}"
            outputs[(text, passages[d])] = rng.choice([gold[q][0], f"answer{rng.randint(0, 3)}", "other thing",
                                                       "answer1 other"])
    return queries, passages, run, outputs, gold


@pytest.mark.parametrize("graded", [False, True])
def test_erag_scores_equal_the_erag_package(graded):
    erag = need("erag", "erag is a test dependency (.ci/run: pip install --no-deps erag)")
    from ragrade.nuggets.erag import exact_match, token_f1

    rng = random.Random(404 + graded)
    worst, compared = 0.0, 0
    for _ in range(10):
        queries, passages, run, outputs, gold = _erag_case(rng, graded)
        metric = token_f1 if graded else exact_match
        texts = {queries[q]: [passages[d] for d in docs] for q, docs in run.items()}
        expected = {queries[q]: gold[q] for q in run}

        def generator(batch, outputs=outputs):
            return {qt: outputs[(qt, docs[0])] for qt, docs in batch.items()}

        def downstream(generated, exp, metric=metric):
            return {qt: metric(a, exp[qt]) for qt, a in generated.items()}

        measures = {"P_5", "success_5"} if graded else {"P_5", "map", "ndcg_cut_5", "recall_5", "recip_rank"}
        theirs = erag.eval(texts, expected, generator, downstream, measures)["per_input"]
        labels = ragrade.erag_labels(queries, run, gold, lambda qt, dt, outputs=outputs: outputs[(qt, dt)],
                                     "token_f1" if graded else "exact_match", passages=passages)
        assert labels.binary is (not graded) or graded
        names = {"P_5": "P@5", "success_5": "success@5", "map": "map", "ndcg_cut_5": "ndcg@5", "recall_5": "recall@5",
                 "recip_rank": "rr"}
        if graded:
            ours = labels.scores([names[m] for m in sorted(measures)])
        else:
            with warnings.catch_warnings():  # (queries without a correct answer: scored 0, as pytrec_eval does)
                warnings.simplefilter("ignore", ragrade.RagradeWarning)
                ours = ragrade.evaluate(labels.qrels, run, [names[m] for m in sorted(measures)],
                                        no_relevant="zero").per_query
        for q, text in queries.items():
            for m in measures:
                worst = max(worst, abs(float(ours.loc[q, names[m]]) - theirs[text][m]))
                compared += 1
    assert worst <= 1e-12 and compared == 10 * 12 * len(measures)
