"""The format registry (ragrade.io.formats): one object per format, the single source of the format
names, extensions, sniffing and readers; every registered format round-trips a run and ground truth."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ragrade
from ragrade.errors import InputError
from ragrade.io import formats

SRC = Path(__file__).resolve().parents[2] / "src" / "ragrade"
RUN = ragrade.Run.from_dict({"q1": {"d1": 3.0, "d2": 2.5, "d3": 1.0}, "q2": {"d9": 0.5, "d1": 0.25}}, name="sys")
QRELS = ragrade.Qrels.from_dict({"q1": {"d1": 2, "d3": 0}, "q2": {"d9": 1}})
WRITABLE = [f for f in formats.REGISTRY if type(f).write_run is not formats.Format.write_run]


def test_the_registry_is_the_list_of_formats():
    assert tuple(f.name for f in formats.REGISTRY) == formats.FORMATS
    assert ragrade.io.FORMATS == formats.FORMATS
    assert len(set(formats.FORMATS)) == len(formats.FORMATS)
    exts = [e for f in formats.REGISTRY for e in f.extensions]
    assert len(exts) == len(set(exts)), "an extension selects one format"
    from ragrade.io import stream

    assert set(stream.STREAM_FORMATS) == {f.name for f in formats.REGISTRY if f.out_of_core}


@pytest.mark.parametrize("fmt", WRITABLE, ids=lambda f: f.name)
def test_each_format_round_trips(tmp_path, fmt):
    ext = fmt.extensions[0] if fmt.extensions else ".data"
    run_path = tmp_path / f"run{ext}"
    ragrade.write_run(RUN, run_path, format=fmt.name)
    back = ragrade.read_run(run_path, format=fmt.name).to_dict()
    if fmt.name == "msmarco":  # ranks, not scores: the order is what survives
        assert {q: sorted(d, key=d.get, reverse=True) for q, d in back.items()} == \
            {q: sorted(d, key=d.get, reverse=True) for q, d in RUN.to_dict().items()}
    else:
        assert back == RUN.to_dict()
    if fmt.extensions:  # found by its extension, and (where it can be told) by content under another name
        assert formats.detect(str(run_path)) is fmt
        blind = tmp_path / "blind.data"
        blind.write_bytes(run_path.read_bytes())
        if fmt.name not in ("tsv", "csv"):  # a headered table is CSV or TSV by its separators
            assert formats.detect(str(blind)).name == ("trec" if fmt.layout else fmt.name)
    if type(fmt).write_qrels is not formats.Format.write_qrels and fmt.name not in ("msmarco", "qid-doc-score"):
        q_path = tmp_path / f"qrels{ext}"
        ragrade.write_qrels(QRELS, q_path, format=fmt.name)
        assert ragrade.read_qrels(q_path, format=fmt.name).to_dict() == QRELS.to_dict()


def test_aliases_and_unknown_names():
    assert formats.get("JSON") is formats.JSONL
    assert formats.get(".pq") is formats.PARQUET
    assert formats.get("feather").name == "arrow"
    with pytest.raises(InputError, match="unknown format 'xml'; use one of trec, msmarco"):
        formats.get("xml")


def test_arrow_ipc_on_the_command_line(tmp_path):
    """The format added by the checklist works everywhere the registry reaches (the CLI's choices too)."""
    from click.testing import CliRunner

    from ragrade.cli import main

    ragrade.write_run(RUN, tmp_path / "run.feather")
    ragrade.write_qrels(QRELS, tmp_path / "qrels.arrow")
    got = CliRunner().invoke(main, ["convert", str(tmp_path / "run.feather"), str(tmp_path / "run.trec")])
    assert got.exit_code == 0, got.output
    assert ragrade.read_run(tmp_path / "run.trec").to_dict() == RUN.to_dict()
    got = CliRunner().invoke(main, ["evaluate", str(tmp_path / "qrels.arrow"), str(tmp_path / "run.feather"),
                                    "-m", "ndcg@10", "--format", "json", "--qrels-format", "arrow"])
    assert got.exit_code == 0, got.output
    assert ragrade.io.guess_kind(tmp_path / "qrels.arrow") == "qrels"


def test_judge_datasets_and_corpora_use_the_registry(tmp_path):
    from ragrade.io.texts import read_passages, read_queries
    from ragrade.judges.dataset import read_rows

    path = tmp_path / "data.json"
    path.write_text('[{"question": "q", "contexts": ["a", "b"]}]')
    assert read_rows(path) == [{"question": "q", "contexts": ["a", "b"]}]
    lines = tmp_path / "data.jsonl.gz"
    import gzip

    lines.write_bytes(gzip.compress(b'{"question": "q", "contexts": ["a"]}\n'))
    assert read_rows(lines) == [{"question": "q", "contexts": ["a"]}]
    topics = tmp_path / "topics.txt"
    topics.write_text("q1\tfirst query\nq2\tsecond\n")
    assert read_queries(topics) == {"q1": "first query", "q2": "second"}
    corpus = tmp_path / "corpus.tsv"
    corpus.write_text('id\ttext\nd1\tsays "hi"\nd2\tother\n')
    assert read_passages(corpus, {"d1"}).texts == {"d1": ("", 'says "hi"')}


FORMAT_WORDS = {w for f in formats.REGISTRY for w in (f.name, *f.aliases)} | \
    {e for f in formats.REGISTRY for e in f.extensions} | {".gz"}


#: Modules that still list formats, each with its owner; the list may only shrink.
KNOWN_FORMAT_LISTS = {
    "nuggets/data.py",  # nuggets (issue 38): _write_records picks JSONL/Parquet by extension; write through
                        # formats.by_extension(path).write_records (docs/formats.md, "Records")
}


def test_no_format_list_outside_the_registry():
    """Format names and file extensions are listed in ragrade/io/formats only, in the whole tree: a tuple,
    list or set of them elsewhere, or an extension written as a string, is a reader keeping its own list."""
    import ast

    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(SRC / "io" / "formats"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_fstrings = {id(c) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for c in n.values}
        for node in ast.walk(tree):
            if id(node) in in_fstrings:  # a name being built (a temporary file's), not a list of formats
                continue
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2 and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.lower() in FORMAT_WORDS
                    for e in node.elts):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower() in \
                    {e for f in formats.REGISTRY for e in f.extensions}:
                found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.value!r}")
    known = {f for f in found if f.split(":")[0] in KNOWN_FORMAT_LISTS}
    assert sorted(set(found) - known) == [], "use ragrade.io.formats (records_format, by_extension, RECORDS)"
    fixed = {m for m in KNOWN_FORMAT_LISTS if not any(f.startswith(m + ":") for f in found)}
    assert fixed == set(), f"fixed, take them off KNOWN_FORMAT_LISTS: {fixed}"


def test_no_private_io_import_outside_io():
    hits = []
    for path in SRC.rglob("*.py"):
        if path.is_relative_to(SRC / "io"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"ragrade\.io\._|from ragrade\.io import _", line):
                hits.append(f"{path.relative_to(SRC)}:{n}")
    assert hits == []
