"""The C fast path for TREC files (``scan_trec`` over the memory-mapped file) against the pyarrow path.

Every file here is read twice, by the fast path and with it disabled, and the two must agree exactly:
query ids, offsets, document ids per row, numbers. Irregular files must fall back (and still agree), and
errors must name the same line as before.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragrade import read_qrels, read_run
from ragrade._ingest import _accel, has_accel
from ragrade.data.ranking import inverse_at, rank_rows_sparse
from ragrade.errors import ParseError
from ragrade.io import trec

pytestmark = pytest.mark.skipif(not has_accel(), reason="the C helper is not built")

RUN = trec.RUN_COLUMNS


def _both(path, reader, monkeypatch, small_parts: bool = True):
    """(fast, slow) readings of one file; asserts the fast path really ran."""
    taken = []
    real = trec._scan_fast

    def spy(*a, **k):
        out = real(*a, **k)
        taken.append(out is not None)
        return out

    with monkeypatch.context() as m:
        if small_parts:  # several threads and several C calls per thread, even on a small file
            m.setattr(trec, "_PARALLEL_MIN", 1)
            m.setattr(trec, "_SCAN_WINDOW", 97)
        m.setattr(trec, "_scan_fast", spy)
        fast = reader(path)
    with monkeypatch.context() as m:
        m.setattr(trec, "_scan_fast", lambda *a, **k: None)
        slow = reader(path)
    return fast, slow, taken


def _same_table(a, b):
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert a.offsets.tolist() == b.offsets.tolist()
    assert a.per_row_docs().tolist() == b.per_row_docs().tolist()


def _random_run_lines(rng, n_queries=40, grouped=True, score_style="fixed"):
    lines = []
    for qi in range(n_queries):
        k = int(rng.integers(1, 30))
        docs = [f"doc-{int(x)}" + "x" * int(rng.integers(0, 12)) for x in rng.choice(10_000, size=k, replace=False)]
        scores = np.round(rng.normal(size=k) * 10, int(rng.integers(0, 5)))
        for rank, (d, s) in enumerate(zip(docs, scores, strict=True), 1):
            if score_style == "fixed":
                text = f"{s:.4f}"
            elif score_style == "repr":
                text = repr(float(s * 1.000001))
            else:
                text = rng.choice([f"{s:e}", f"{s:g}", f"{int(s)}", f"{s:+.3f}", f"{s:.20f}", f"{s * 1e-30:.6e}",
                                   f"{s * 1e300:.3e}", f"{s:.1f}".rstrip("0")])
            lines.append((f"q{qi}", f"{f'q{qi}'} Q0 {d} {rank} {text} tag\n"))
    if not grouped:
        order = rng.permutation(len(lines))
        lines = [lines[i] for i in order]
    return "".join(t for _, t in lines)


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("score_style", ["fixed", "repr", "mixed"])
def test_run_fast_path_equals_pyarrow_path(tmp_path, rng, monkeypatch, grouped, score_style):
    path = tmp_path / "run.txt"
    path.write_text(_random_run_lines(rng, grouped=grouped, score_style=score_style))
    fast, slow, taken = _both(path, read_run, monkeypatch)
    assert taken == [True]
    _same_table(fast, slow)
    assert np.array_equal(fast.scores, slow.scores)  # bit-identical numbers
    assert fast.name == slow.name == "tag"


def test_qrels_fast_path_equals_pyarrow_path(tmp_path, rng, monkeypatch):
    lines = [f"q{q} 0 d{d} {int(rng.integers(0, 4))}\n" for q in range(50)
             for d in rng.choice(1000, size=int(rng.integers(1, 40)), replace=False)]
    path = tmp_path / "qrels.txt"
    path.write_text("".join(lines))
    fast, slow, taken = _both(path, read_qrels, monkeypatch)
    assert taken == [True]
    _same_table(fast, slow)
    assert np.array_equal(fast.grades, slow.grades)
    assert fast.raw_is_arrow  # ids stay raw Arrow strings: coded only if something asks
    assert fast.to_dict() == slow.to_dict()


def test_interleaved_qrels_are_grouped(tmp_path, monkeypatch):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq2 0 b 2\nq1 0 c 0\n")
    fast, slow, taken = _both(path, read_qrels, monkeypatch)
    assert taken == [True]
    assert fast.to_dict() == slow.to_dict() == {"q1": {"a": 1.0, "c": 0.0}, "q2": {"b": 2.0}}


def test_a_query_straddling_the_cut_between_threads(tmp_path, monkeypatch):
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q1 Q0 d{i} {i} {100 - i} t\n" for i in range(50)) + "q2 Q0 x 1 1 t\n")
    fast, slow, taken = _both(path, read_run, monkeypatch)
    assert taken == [True]
    assert fast.query_ids.tolist() == ["q1", "q2"]
    assert fast.offsets.tolist() == [0, 50, 51]
    _same_table(fast, slow)


@pytest.mark.parametrize("content", [
    "\nq1 Q0 a 1 2.5 t\n\n\nq1 Q0 b 2 1 t",  # blank lines, no final newline
    "q1 Q0 a 1 .5 t\nq1 Q0 b 2 -0 t\nq1 Q0 c 3 1. t\nq1 Q0 d 4 +7 t\nq1 Q0 e 5 1E+2 t\n",
    "q1 Q0 a 1 123456789012345678901234567890 t\nq1 Q0 b 2 0.1000000000000000055511151231257827 t\n",
    "q1 Q0 a 1 1e-320 t\nq1 Q0 b 2 4.9406564584124654e-324 t\nq1 Q0 c 3 1.7976931348623157e308 t\n",
    "q1\tQ0\ta\t1\t2.5\tt\nq1 Q0\tb 2\t1 t\n",  # one tab separates fields as one space does (.tsv files)
])
def test_number_forms_and_blank_lines(tmp_path, monkeypatch, content):
    path = tmp_path / "run.txt"
    path.write_text(content)
    fast, slow, taken = _both(path, read_run, monkeypatch, small_parts=False)
    assert taken == [True]
    _same_table(fast, slow)
    assert np.array_equal(fast.scores, slow.scores)


@pytest.mark.parametrize("content", [
    "q1 Q0 a 1 2.5 t\r\nq1 Q0 b 2 1 t\r\n",  # CRLF
    "q1\t\tQ0\ta\t1\t2.5\tt\n",  # two tabs
    "q1 \tQ0 a 1 2.5 t\n",  # a space then a tab
    "q1\tQ0\ta\t1\t2.5\tt\t\n",  # a trailing tab
    " q1 Q0 a 1 2.5 t\n",  # leading space
    "q1 Q0  a 1 2.5 t\n",  # two spaces
    "q1 Q0 a 1 2.5 t \n",  # trailing space
    "q1 Q0 a 1 inf t\nq1 Q0 b 2 -Infinity t\n",  # named numbers: pyarrow's rules
])
def test_irregular_files_fall_back_and_agree(tmp_path, monkeypatch, content):
    path = tmp_path / "run.txt"
    path.write_bytes(content.encode())
    fast, slow, taken = _both(path, read_run, monkeypatch, small_parts=False)
    assert taken == [False]  # the C scan declined; the careful path read it
    _same_table(fast, slow)
    assert np.array_equal(fast.scores, slow.scores)


@pytest.mark.parametrize("content", [
    "q1 Q0 \u00e9t\u00e9 1 2.5 t\nq1 Q0 b 2 1 t\n",  # 2-byte sequences
    "\u67e5\u8be2 Q0 \u6587\u6863-\U0001f600 1 2.5 t\n\u67e5\u8be2 Q0 b 2 2.5 t\n",  # 3 and 4 bytes, a tie
    "q1 Q0 a 1 2.5 t\u00e9\nq1 Q0 b\x7f 2 1 \u00e9\n",  # non-ASCII outside the ids, DEL in an id
    "".join(f"q{i % 3} Q0 d{i}\u00fc{'x' * (i % 70)} {i} {i % 7} t\n" for i in range(300)),  # across blocks
])
def test_non_ascii_ids_take_the_fast_path(tmp_path, monkeypatch, content):
    path = tmp_path / "run.txt"
    path.write_bytes(content.encode())
    fast, slow, taken = _both(path, read_run, monkeypatch)
    assert taken == [True]
    _same_table(fast, slow)
    assert np.array_equal(fast.scores, slow.scores)
    assert fast.to_lists() == slow.to_lists()  # ties broken by id: the same byte order


@pytest.mark.parametrize("bad", [b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xf4\x90\x80\x80"])
@pytest.mark.parametrize("where", ["doc", "query"])
def test_invalid_utf8_in_an_id_is_declined_and_named(tmp_path, bad, where):
    # invalid: a lone byte, an overlong '/', a surrogate, a truncated sequence, above U+10FFFF
    path = tmp_path / "run.txt"
    second = b"q1 Q0 d" + bad + b" 2 1 t\n" if where == "doc" else b"q" + bad + b" Q0 d2 2 1 t\n"
    path.write_bytes(b"q1 Q0 d1 1 2 t\n" + second)
    assert trec._scan_fast(str(path), trec.RUN6, None) is None
    with pytest.raises(ParseError, match="UTF-8") as info:
        read_run(path)
    assert info.value.line == 2


@pytest.mark.parametrize(("second", "words"), [
    (b"q1 Q0 d\x002 2 1 t\n", "NUL"), (b"q\x001 Q0 d2 2 1 t\n", "NUL"), (b"q1 Q0  2 1 t\n", "document id|columns"),
])
@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_the_tokenizer_declines_what_the_readers_no_longer_look_for(tmp_path, second, words, kind):
    """The readers take the C tokenizer's ids without looking for an empty id or a NUL byte again (the id columns
    of two million rows are not scanned twice: ``ids_checked``), because the tokenizer declines such a line and
    the careful path names it."""
    path = tmp_path / "f.txt"
    if kind == "qrels":
        second = second.replace(b" Q0 ", b" 0 ").replace(b" 2 1 t", b" 1")
    path.write_bytes((b"q1 Q0 d1 1 2 t\n" if kind == "run" else b"q1 0 d1 1\n") + second)
    layout = trec.RUN6 if kind == "run" else trec.qrels_layout(str(path))
    assert trec._scan_fast(str(path), layout, None) is None
    with pytest.raises(ParseError, match=words) as info:
        (read_run if kind == "run" else read_qrels)(path)
    assert info.value.line == 2


@pytest.mark.parametrize(("content", "line", "words"), [
    ("q1 Q0 a 1 2 t\nq1 Q0 b 2 nan t\n", 2, "NaN"),
    ("q1 Q0 a 1 2 t\nq1 Q0 b 2 x t\n", 2, "not a number"),
    ("q1 Q0 a 1 2 t\n\nq1 Q0 b 2 1\n", 3, "columns"),
])
def test_errors_still_name_the_line(tmp_path, content, line, words):
    path = tmp_path / "run.txt"
    path.write_text(content)
    with pytest.raises(ParseError, match=words) as info:
        read_run(path)
    assert info.value.line == line


def test_qrels_duplicate_and_infinite_grade_name_the_line(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq1 0 b 1\nq2 0 a 1\nq2 0 c 0\nq2 0 a 2\n")
    with pytest.raises(ParseError, match="'a' is judged twice for query 'q2'") as info:
        read_qrels(path)
    assert info.value.line == 5
    path.write_text("q1 0 a 1\nq1 0 b 1e999\n")
    with pytest.raises(ParseError, match="not a finite number") as info:
        read_qrels(path)
    assert info.value.line == 2


def test_progress_is_reported_on_the_fast_path(tmp_path, monkeypatch):
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i // 10} Q0 d{i} {i} {1000 - i} t\n" for i in range(500)))
    monkeypatch.setattr(trec, "_SCAN_WINDOW", 1000)
    calls: list[tuple[int, int]] = []
    run = read_run(path, progress=lambda done, total: calls.append((done, total)))
    assert run.n_rows == 500
    size = path.stat().st_size
    assert len(calls) > 3 and calls[-1] == (size, size)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


# -- the C pieces on their own ------------------------------------------------------------------------

def _scan_numbers(texts: list[str]) -> tuple[int, np.ndarray]:
    data = "".join(f"q Q0 d 1 {t} x\n" for t in texts).encode()
    n = len(texts)
    state = np.array([0, 0, 0, 0, -1, 0, 0, -1], dtype=np.int64)
    vals = np.empty(n)
    _accel.scan_trec(data, 0, len(data), 6, 4, 2, False, vals, np.empty(n + 1, dtype=np.int64),
                     np.empty(len(data), dtype=np.uint8), np.empty(n, dtype=np.int64),
                     np.empty(n + 1, dtype=np.int64), np.empty(len(data), dtype=np.uint8), state)
    return int(state[6]), vals


decimal = st.builds(
    lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
    st.sampled_from(["", "-", "+"]),
    st.from_regex(r"[0-9]{1,25}", fullmatch=True),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{0,25}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(decimal, st.floats(allow_nan=False, allow_infinity=False).map(repr)), min_size=1,
                max_size=50))
def test_numbers_are_correctly_rounded(texts):
    status, vals = _scan_numbers(texts)
    assert status == 0
    expected = np.array([float(t) for t in texts])
    assert np.array_equal(vals, expected)
    assert np.array_equal(np.signbit(vals), np.signbit(expected))


@pytest.mark.parametrize("text", ["nan", "inf", "1e", "0x10", "1_0", ".", "-", "1.2.3", "e5", "1e+"])
def test_numbers_outside_the_decimal_grammar_are_declined(text):
    status, _ = _scan_numbers([text])
    assert status == 1


def test_first_duplicate_in_segments_matches_a_reference(rng):
    for _ in range(30):
        nseg = int(rng.integers(1, 20))
        sizes = rng.integers(0, 60, size=nseg)
        words = [f"w{int(x)}" * int(rng.integers(1, 3)) for x in rng.integers(0, 400, size=int(sizes.sum()))]
        starts = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        data = "".join(words).encode()
        off = np.concatenate(([0], np.cumsum([len(w) for w in words]))).astype(np.int64)
        expected = -1
        for s in range(nseg):
            seen: set[str] = set()
            for r in range(starts[s], starts[s + 1]):
                if words[r] in seen:
                    expected = r
                    break
                seen.add(words[r])
            if expected >= 0:
                break
        assert _accel.first_duplicate_in_segments(off, data, starts) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=0, max_size=12), min_size=1, max_size=8), st.data())
def test_inverse_at_equals_the_full_inverse(groups, data):
    # descending scores per query with ties: only tied rows move
    scores = np.concatenate([np.sort(np.array(g, dtype=float))[::-1] for g in groups]) if any(groups) else np.zeros(0)
    offsets = np.concatenate(([0], np.cumsum([len(g) for g in groups]))).astype(np.int64)
    docs = np.array([f"d{data.draw(st.integers(0, 99))}" for _ in range(len(scores))], dtype=object)
    perm, moved = rank_rows_sparse(offsets, scores, lambda rows: docs[rows])
    if perm is None:
        return
    assert moved is not None  # scores already descend: a sparse result
    assert np.array_equal(scores[perm], scores)
    full = np.empty(len(perm), dtype=np.int64)
    full[perm] = np.arange(len(perm))
    rows = np.arange(len(perm))
    assert np.array_equal(inverse_at(perm, moved, rows), full)
    assert np.array_equal(inverse_at(perm, None, rows), full)
