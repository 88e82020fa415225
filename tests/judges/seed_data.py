"""The worked examples of the public write-up of the context metrics and their verdicts as a script for a judge."""

from __future__ import annotations

from collections.abc import Mapping

PRECISION = {
    "id": "precision",
    "question": "Where is the Eiffel Tower located?",
    "reference": "The Eiffel Tower is located in Paris.",
    "contexts": [
        "The Eiffel Tower is located in Paris.",
        "The Brandenburg Gate is located in Berlin.",
        "The Colosseum is located in Rome.",
    ],
}
RECALL = {
    "id": "recall",
    "question": "What are the primary causes of deforestation?",
    "reference": "The primary causes of deforestation are logging, agriculture, urbanization, and wildfires.",
    "contexts": [
        "Logging is a major driver of deforestation worldwide.",
        "Agriculture and urban development contribute significantly to forest loss.",
    ],
}
ENTITIES = {
    "id": "entities",
    "question": "What is the capital of Brazil, and when was its current capital established?",
    "reference": "The capital of Brazil is Brasília, established on April 21, 1960.",
    "contexts": ["Brasília is a city in Brazil, designed as the capital."],
}
RELEVANCY = {
    "id": "relevancy",
    "question": "What are the benefits of drinking green tea?",
    "reference": "Green tea has antioxidants and improves brain function.",
    "contexts": [
        "Green tea contains antioxidants that may reduce the risk of chronic diseases.",
        "Coffee is a popular beverage worldwide.",
        "Green tea can improve brain function due to its caffeine content.",
    ],
}
SEED_ROWS = [PRECISION, RECALL, ENTITIES, RELEVANCY]

# The seed's verdicts, as a judge would give them.
_CLAIMS = [
    ("Logging is a cause of deforestation", 1),
    ("Agriculture is a cause of deforestation", 1),
    ("Urbanization is a cause of deforestation", 1),
    ("Wildfires are a cause of deforestation", 0),
]
_ENTITIES = {
    ENTITIES["reference"]: ["Brazil", "Brasília", "April 21, 1960"],
    ENTITIES["contexts"][0]: ["Brasília", "Brazil"],
}


def seed_script(task: str, inputs: Mapping[str, str]) -> dict:
    if task == "chunk_verdict":
        return {"verdict": int("Eiffel" in inputs["context"] or "tea" in inputs["context"]), "reason": "seed"}
    if task == "attribution":
        return {"statements": [{"statement": s, "reason": "seed", "attributed": a} for s, a in _CLAIMS]}
    if task == "entities":
        return {"entities": _ENTITIES.get(inputs["text"], ["Something"])}
    if task == "relevance":
        return {
            "statements": [{"statement": inputs["context"], "reason": "seed", "relevant": int("Green tea" in inputs["context"])}]
        }
    raise AssertionError(task)
