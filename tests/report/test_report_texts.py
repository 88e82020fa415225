from __future__ import annotations

import pytest

from ragrade.errors import ParseError
from ragrade.report.texts import read_texts


def test_jsonl_beir_layout_and_tsv(tmp_path) -> None:
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"_id": "d1", "title": "T", "text": "hello <b>"}\n\n{"id": 2, "contents": "two"}\n')
    assert read_texts(p) == {"d1": "T\nhello <b>", "2": "two"}
    t = tmp_path / "q.tsv"
    t.write_text("id\ttext\nq1\twhat is\tthis\n")
    assert read_texts(t) == {"q1": "what is\tthis"}


def test_bad_lines_name_file_and_line(tmp_path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text('{"_id": "d1", "text": "ok"}\n{"name": "x"}\n')
    with pytest.raises(ParseError, match=r"c\.jsonl:2"):
        read_texts(p)
    p.write_text("{not json\n")
    with pytest.raises(ParseError, match=r"c\.jsonl:1"):
        read_texts(p)
    (tmp_path / "c.xml").write_text("<a/>")
    with pytest.raises(ParseError, match="cannot tell the format"):
        read_texts(tmp_path / "c.xml")
