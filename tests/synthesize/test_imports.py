"""Test sets users already have, generated with the peers' real code on a small corpus (a scripted LLM), become
span truth with every reference located: Ragas' ``TestsetGenerator`` (single- and multi-hop specific
synthesizers over a knowledge graph of the corpus' paragraphs) and LlamaIndex's ``generate_qa_embedding_pairs``
(``EmbeddingQAFinetuneDataset``). References that are not in the corpus are reported, never kept."""

from __future__ import annotations

import importlib.util
import json
import os
import random
import re
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragrade.cli import main
from ragrade.errors import InputError, ParseError
from ragrade.spans import read_corpus, read_spans
from ragrade.synthesis import import_llamaindex, import_ragas

from . import scripted

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _need(module: str, why: str):
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=why)


# -- Ragas -----------------------------------------------------------------------------------------------------

def _ragas_llm():
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class ScriptedChat(BaseChatModel):
        """Answers Ragas' persona-matching and query-generation prompts from the prompt's input."""

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            text = str(messages[-1].content)
            i = text.rfind("input: ")
            data = json.loads(text[i + 7: text.find("\nOutput:", i)])
            if "associate each persona" in text:
                out = {"mapping": {p["name"]: data["themes"] for p in data["personas"]}}
            else:
                term = data.get("term") or ", ".join(data.get("themes", []) or ["it"])
                out = {"query": f"What happened to the {term}?", "answer": "What the context says."}
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=json.dumps(out)))])

    return ScriptedChat()


def _ragas_testset(docs: dict[str, str], size: int):
    _need("ragas", "ragas==0.4.3 is in the test extra")
    from langchain_core.embeddings import FakeEmbeddings
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.testset import TestsetGenerator
    from ragas.testset.graph import KnowledgeGraph, Node, NodeType
    from ragas.testset.persona import Persona
    from ragas.testset.synthesizers.multi_hop.specific import MultiHopSpecificQuerySynthesizer
    from ragas.testset.synthesizers.single_hop.specific import SingleHopSpecificQuerySynthesizer
    from ragas.testset.transforms import apply_transforms
    from ragas.testset.transforms.relationship_builders import OverlapScoreBuilder

    kg = KnowledgeGraph()
    for text in docs.values():
        for para in text.split("\n\n"):
            ents = [w for w in re.findall(r"[a-z]+", para) if w in scripted._NOUNS]
            kg.nodes.append(Node(type=NodeType.CHUNK, properties={"page_content": para.strip(), "entities": ents}))
    apply_transforms(kg, [OverlapScoreBuilder(threshold=0.01)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        llm = LangchainLLMWrapper(_ragas_llm())
        emb = LangchainEmbeddingsWrapper(FakeEmbeddings(size=8))
    gen = TestsetGenerator(llm=llm, embedding_model=emb, knowledge_graph=kg,
                           persona_list=[Persona(name="Archivist", role_description="Keeps the town's records.")])
    random.seed(0)
    ts = gen.generate(size, query_distribution=[(SingleHopSpecificQuerySynthesizer(llm=llm), 0.5),
                                                (MultiHopSpecificQuerySynthesizer(llm=llm), 0.5)], num_personas=1)
    return ts.to_pandas()


def test_a_ragas_testset_imports_with_every_reference_located(tmp_path):
    docs = scripted.corpus(paragraphs=3)
    folder = tmp_path / "docs"
    scripted.write_corpus(folder, docs)
    df = _ragas_testset(docs, 6)
    df.to_csv(tmp_path / "testset.csv", index=False)  # reference_contexts as the lists' Python text
    df.to_json(tmp_path / "testset.jsonl", orient="records", lines=True)
    for fmt in ("csv", "jsonl"):
        _check_ragas(tmp_path, folder, df, fmt)


def _check_ragas(tmp_path, folder, df, fmt):
    path = tmp_path / f"testset.{fmt}"
    ts = import_ragas(path, folder)
    assert len(ts) == len(df) and not ts.rejects and ts.complete
    assert {it.kind for it in ts.items} == {"single", "multi"}
    corpus = read_corpus(folder)
    for it, contexts in zip(ts.items, df["reference_contexts"], strict=True):
        assert len(it.excerpts) == len(contexts)
        for x, ctx in zip(it.excerpts, contexts, strict=True):
            assert x.text == corpus[x.doc][x.start:x.end] and x.method == "exact"
            assert ctx.endswith(x.text)  # the <n-hop> mark taken off
        assert 0.0 <= it.scores["leakage"] <= 1.0 and it.scores["bm25_rank"] >= 1
    assert ts.provenance["references"]["not_located"] == 0
    out = tmp_path / f"set-{fmt}"
    r = CliRunner().invoke(main, ["synthesize", "--import", "ragas", str(path), "--corpus", str(folder), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert len(read_spans(out / "spans.jsonl", corpus=folder).queries) == len(df)


def test_references_not_in_the_corpus_are_reported(tmp_path):
    folder = tmp_path / "docs"
    scripted.write_corpus(folder, scripted.corpus(paragraphs=2))
    rows = [{"user_input": "Which foundry?", "reference_contexts": ["In season 1 the harbor council repainted the "
                                                                   "foundry beside the mill, spending 9 thousand crowns."]},
            {"user_input": "Which moon?", "reference_contexts": ["The moon is made of a cheese nobody has tasted yet."]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ts = import_ragas(path, folder)
    assert [it.question for it in ts.items] == ["Which foundry?"] and not ts.complete
    assert len(ts.rejects) == 1 and ts.rejects[0].stage == "import" and "not in the corpus" in ts.rejects[0].reason
    r = CliRunner().invoke(main, ["synthesize", "--import", "ragas", str(path), "--corpus", str(folder), "-o",
                                  str(tmp_path / "o")])
    assert r.exit_code == 0 and "not located" in r.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"question": "x"}) + "\n")
    with pytest.raises(ParseError, match="user_input"):
        import_ragas(bad, folder)


# -- LlamaIndex ----------------------------------------------------------------------------------------------

def _llamaindex_common():
    """llama_index.finetuning.embeddings.common, loaded from its file: the package's __init__ imports
    sentence-transformers (PyTorch), which this module does not need."""
    spec = importlib.util.find_spec("llama_index.finetuning")
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("CI"):
            pytest.fail("llama-index-finetuning is installed by .ci/run (pip install --no-deps)")
        pytest.skip("llama-index-finetuning is not installed (pip install --no-deps llama-index-finetuning)")
    path = Path(next(iter(spec.submodule_search_locations))) / "embeddings" / "common.py"
    mod_spec = importlib.util.spec_from_file_location("_llamaindex_finetuning_common", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def _llamaindex_llm():
    from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
    from llama_index.core.llms.callbacks import llm_completion_callback

    class ScriptedLLM(CustomLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="scripted")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs) -> CompletionResponse:
            nouns = [w for w in re.findall(r"[a-z]+", prompt) if w in scripted._NOUNS]
            return CompletionResponse(text=f"1. Which {nouns[0]} is meant?\n2. Where is the {nouns[-1]}?")

        @llm_completion_callback()
        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs):
            yield self.complete(prompt)

    return ScriptedLLM()


def test_a_llamaindex_dataset_imports_with_every_reference_located(tmp_path):
    _need("llama_index.core", "llama-index-core==0.14.25 is in the test extra")
    common = _llamaindex_common()
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    docs = scripted.corpus(paragraphs=3)
    folder = tmp_path / "docs"
    scripted.write_corpus(folder, docs)
    nodes = SentenceSplitter(chunk_size=96, chunk_overlap=16).get_nodes_from_documents(
        [Document(text=t, id_=d) for d, t in docs.items()])
    ds = common.generate_qa_embedding_pairs(nodes, llm=_llamaindex_llm(), num_questions_per_chunk=2,
                                            output_path=str(tmp_path / "qa.json"), verbose=False)
    path = tmp_path / "dataset.json"
    ds.save_json(str(path))
    ts = import_llamaindex(path, folder)
    assert len(ts) == len(ds.queries) and not ts.rejects
    corpus = read_corpus(folder)
    for it in ts.items:
        assert it.query in ds.queries and len(it.excerpts) == len(ds.relevant_docs[it.query])
        (x,) = it.excerpts
        assert x.text == corpus[x.doc][x.start:x.end]
        assert " ".join(x.text.split()) == " ".join(ds.corpus[ds.relevant_docs[it.query][0]].split())
    out = tmp_path / "set"
    r = CliRunner().invoke(main, ["synthesize", "--import", "llamaindex", str(path), "--corpus", str(folder), "-o",
                                  str(out)])
    assert r.exit_code == 0, r.output
    assert (out / "topics.tsv").read_text().count("\n") == len(ds.queries) + 1


def test_a_broken_llamaindex_file(tmp_path):
    folder = tmp_path / "docs"
    scripted.write_corpus(folder, scripted.corpus(paragraphs=1))
    bad = tmp_path / "d.json"
    bad.write_text(json.dumps({"queries": {"q": "x"}, "corpus": {}, "relevant_docs": {"q": ["n1"]}}))
    with pytest.raises(ParseError, match="not in the dataset's corpus"):
        import_llamaindex(bad, folder)
    bad.write_text("[1, 2]")
    with pytest.raises(ParseError):
        import_llamaindex(bad, folder)
    with pytest.raises(InputError):
        from ragrade.synthesis.imports import import_test_set

        import_test_set("deepeval", bad, folder)
