"""Generate texts for the example collection (seeded): the queries of ``qrels.tsv`` and the passages of its
documents, for the assessment walk-through in ``docs/assessment.md``.

    python examples/make_texts.py

Writes ``topics.tsv`` (``qid<TAB>text``) and ``corpus.jsonl`` (``{"_id", "title", "text"}`` per line). The
texts are synthetic: each query names four topic words, and a document judged with grade g for a query
mentions about g + 1 of them (grade 0: at most one), so that the word-overlap assessor agrees with the
example qrels only roughly, as an LLM would. A few unjudged documents that the runs retrieve mention most
of a query's words (the holes an assessor should find). One unjudged document in the dense run's top 10 is
left out of the corpus on purpose (a missing passage).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

TOPICS = [
    "glacier", "volcano", "monsoon", "coral", "tundra", "aquifer", "canyon", "delta", "savanna", "estuary",
    "lichen", "orchid", "falcon", "beetle", "salmon", "walrus", "bamboo", "cactus", "mangrove", "sequoia",
    "lighthouse", "aqueduct", "cathedral", "windmill", "observatory", "harbour", "railway", "bridge", "tunnel",
    "fortress", "telescope", "compass", "printing", "vaccine", "battery", "turbine", "satellite", "microscope",
    "pendulum", "thermometer", "violin", "harp", "mosaic", "fresco", "tapestry", "porcelain", "origami",
    "calligraphy", "sonnet", "opera", "chess", "archery", "rowing", "fencing", "sailing", "cycling", "marathon",
    "climbing", "skating", "surfing", "bread", "cheese", "coffee", "chocolate", "honey", "olive", "saffron",
    "vanilla", "pepper", "rice", "tea", "wine", "cider", "pasta", "noodle", "dumpling", "yogurt", "butter",
    "salt", "sugar", "copper", "granite", "marble", "quartz", "amber", "pearl", "silk", "cotton", "wool",
    "linen", "paper", "glass", "steel", "bronze", "clay", "timber", "rubber", "leather", "ivory", "jade",
    "harvest", "migration", "erosion", "eclipse", "tide", "aurora", "drought", "flood", "avalanche", "wildfire",
    "earthquake", "tsunami", "comet", "meteor", "nebula", "galaxy", "planet", "moon", "orbit", "gravity",
    "magnet", "crystal", "fossil", "dinosaur", "mammoth", "pyramid", "temple", "castle", "palace", "museum",
    "library", "market", "festival", "carnival", "parade", "lantern", "kite", "puzzle", "riddle", "legend",
]
FILLER = [
    "the", "a", "an", "of", "in", "on", "for", "with", "from", "by", "about", "during", "across", "between",
    "history", "people", "local", "region", "early", "later", "famous", "common", "small", "large", "many",
    "several", "known", "called", "often", "usually", "found", "made", "used", "built", "grown", "kept",
    "study", "report", "survey", "visitors", "season", "century", "decade", "records", "archive", "notes",
    "guide", "overview", "example", "method",
]
# only stop words around the topic words, so that a passage can hold every content word of its query
QUESTION_FORMS = ("what about {0} and {1} in {2} {3}", "{0} and {1} with {2} {3}", "the {0} of {1} for {2} {3}",
                  "how is {0} with {1} and {2} {3}")


def read_trec(path: Path, ncols: int) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if len(line.split()) == ncols]


def main() -> None:
    rng = np.random.default_rng(20240613)
    qrels = read_trec(HERE / "qrels.tsv", 4)
    runs = read_trec(HERE / "run.tsv", 6) + read_trec(HERE / "run_dense.tsv", 6)
    queries = sorted({r[0] for r in qrels})
    words = {q: [str(w) for w in rng.choice(TOPICS, size=4, replace=False)] for q in queries}
    mentions: dict[str, list[str]] = {}
    for q, _, d, g in qrels:
        k = {0: int(rng.integers(0, 2)), 1: 2, 2: 3, 3: 4}[int(g)]
        if int(g) > 0 and rng.random() < 0.2:  # the assessor should not agree perfectly
            k = max(0, k + int(rng.choice([-1, 1])))
        mentions.setdefault(d, []).extend(str(w) for w in rng.choice(words[q], size=min(k, 4), replace=False))
    judged = {(q, d) for q, _, d, _ in qrels}
    for q, _, d, *_ in runs:
        if (q, d) not in judged and d not in mentions and rng.random() < 0.12:
            mentions[d] = [str(w) for w in rng.choice(words[q], size=int(rng.integers(2, 5)), replace=False)]
    with open(HERE / "topics.tsv", "w", encoding="utf-8") as f:
        for q in queries:
            form = QUESTION_FORMS[int(rng.integers(len(QUESTION_FORMS)))]
            f.write(f"{q}\t{form.format(*words[q])}\n")
    left_out = next(d for q, _, d, rank, *_ in read_trec(HERE / "run_dense.tsv", 6)
                    if int(rank) == 10 and (q, d) not in judged)
    with open(HERE / "corpus.jsonl", "w", encoding="utf-8") as f:
        for i in range(1, 1501):
            d = f"doc-{i:04d}"
            if d == left_out:
                continue
            body = [str(w) for w in rng.choice(FILLER, size=int(rng.integers(14, 24)))]
            for w in mentions.get(d, []):
                body.insert(int(rng.integers(0, len(body) + 1)), w)
            # unrelated topic words, so that mentions alone do not tell relevant documents apart
            for w in rng.choice(TOPICS, size=2, replace=False):
                body.insert(int(rng.integers(0, len(body) + 1)), str(w))
            text = " ".join(body).capitalize() + "."
            f.write(json.dumps({"_id": d, "title": f"Document {i}", "text": text}) + "\n")


if __name__ == "__main__":
    main()
