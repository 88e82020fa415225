"""Every precondition of the C helper that a caller could break is checked (issue 11, item 12): each C
function gets inputs that would make it read or write out of bounds if it trusted them, and must raise
``ValueError`` instead (the sanitizer build of CI turns any slip into a crash). Also: references held
across Python code run from inside ``scan`` (``__float__``, ``__eq__``), and the warning when the build
fell back."""

from __future__ import annotations

import gc
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ragrade import _ingest, _native

accel = _ingest._accel
needs_accel = pytest.mark.skipif(accel is None, reason="the C helper is not built (or RAGRADE_NO_ACCEL is set)")

I64 = np.int64


def _gold(strings: list[bytes]) -> tuple[np.ndarray, bytes, np.ndarray]:
    off = np.zeros(len(strings) + 1, dtype=I64)
    np.cumsum([len(s) for s in strings], out=off[1:])
    data = b"".join(strings)
    prefix = np.empty(len(strings), dtype=np.uint64)
    accel.prefixes8(off, data, prefix)
    return off, data, prefix


@needs_accel
def test_match_segments_refuses_unsorted_offsets_before_writing():
    run_off = np.arange(0, 101, dtype=I64)  # 100 one-byte strings
    run_data = b"a" * 100
    gold_off, gold_data, prefix = _gold([b"a"])
    out = np.full(10, -7, dtype=I64)  # room for 10 rows only
    # segment 0 claims rows 0..99 (beyond `out`), segment 1 ends at 5: unsorted; the last offset fits `out`
    seg_off = np.array([0, 100, 5], dtype=I64)
    with pytest.raises(ValueError, match="match_segments"):
        accel.match_segments(run_off, run_data, 8, 0, seg_off, np.array([0, 0], dtype=I64),
                             np.array([0, 1], dtype=I64), gold_off, gold_data, prefix, out, 0, 2)
    assert (out == -7).all()  # nothing was written


@needs_accel
@pytest.mark.parametrize(("seg_off", "seg_to_grp", "grp_off", "row_base"), [
    ([0, 5, 3], [0, 0], [0, 1], 0),  # decreasing
    ([-1, 3], [0], [0, 1], 0),  # negative
    ([0, 3], [0], [0, 9], 0),  # group beyond the gold strings
    ([0, 3], [0], [1, 0], 0),  # group end before its start
    ([0, 3], [0], [0, 1], 2),  # rows before the chunk's first row
])
def test_match_segments_other_broken_preconditions(seg_off, seg_to_grp, grp_off, row_base):
    gold_off, gold_data, prefix = _gold([b"a"])
    out = np.empty(10, dtype=I64)
    with pytest.raises(ValueError):
        accel.match_segments(np.arange(11, dtype=I64), b"x" * 10, 8, row_base, np.array(seg_off, dtype=I64),
                             np.array(seg_to_grp, dtype=I64), np.array(grp_off, dtype=I64), gold_off, gold_data,
                             prefix, out, 0, len(seg_to_grp))


@needs_accel
def test_scan_refuses_unsorted_which():
    dicts = [{"a": 1.0}, {"b": 2.0}]
    with pytest.raises(ValueError, match="not sorted"):
        accel.scan(dicts, None, np.array([1, 0], dtype=I64), np.array(["a", "b"], dtype=object),
                   np.array([0, 1], dtype=I64))


def test_scan_join_accepts_any_order():
    dicts = [{"a": 1.0, "b": 3.0}, {"b": 2.0}]
    for use in (None, False):
        status, _, _, found = _ingest.scan_join(dicts, np.array([1, 0, 1]), np.array(["b", "a", "a"], dtype=object),
                                                use_accel=use)
        assert status == 0
        np.testing.assert_array_equal(found, [2.0, 1.0, np.nan])


class Evil:
    """A value whose ``__float__`` empties the dict being scanned and the list holding it, and drops its
    own reference to that dict: once it returns, the dict, its keys and the value itself are freed unless
    the scanner holds references to them."""

    def __init__(self, outer: list) -> None:
        self.outer = outer
        self.victim: dict | None = None

    def __float__(self) -> float:
        victim, self.victim = self.victim, None
        if victim is not None:
            victim.clear()
        self.outer.clear()
        return 1.0


def _outer_with_evil(n: int) -> list:
    outer: list = []
    d = {("k%d" % i) * 10: 2.0 for i in range(n)}  # noqa: UP031 - keys built at run time (no interning)
    evil = Evil(outer)
    d["evil" * 10] = evil
    d.update({("z%d" % i) * 10: 3.0 for i in range(n)})  # noqa: UP031
    evil.victim = d
    outer.extend([d, {"x" * 20: 2.0}])
    return outer


@needs_accel
@pytest.mark.parametrize("with_keys", [False, True])
def test_scan_holds_references_across_float(with_keys):
    for n in (0, 1, 5, 40):
        outer = _outer_with_evil(n)
        total = sum(len(d) for d in outer)
        keys = np.empty(total, dtype=object) if with_keys else None
        status, *_ = accel.scan(outer, keys, np.array([0, 1], dtype=I64), np.array(["z0" * 10, "x" * 20], dtype=object),
                                np.array([0, 1], dtype=I64))
        gc.collect()
        assert status in (0, 5)  # the sizes changed under the scan: reported, never a crash
        if with_keys:
            assert all(k is None or isinstance(k, str) for k in keys)


_NONE = np.zeros(0, dtype=I64)


@needs_accel
def test_scan_makes_its_keys_array_through_a_callable():
    dicts = [{"a": 1.0, "b": 2.0}, {}, {"c": 3}]
    asked: list[int] = []

    def make(n: int) -> np.ndarray:
        asked.append(n)
        return np.empty(n, dtype=object)

    status, counts, values, _, keys = accel.scan(dicts, make, _NONE, np.zeros(0, dtype=object), _NONE)
    assert status == 0 and asked == [3] and keys.tolist() == ["a", "b", "c"]
    assert np.frombuffer(values).tolist() == [1.0, 2.0, 3.0] and np.frombuffer(counts, dtype=I64).tolist() == [2, 0, 1]


@needs_accel
def test_scan_checks_what_the_keys_callable_gives_and_does():
    dicts = [{"a": 1.0, "b": 2.0}, {"c": 3.0}]
    args = (_NONE, np.zeros(0, dtype=object), _NONE)
    with pytest.raises(TypeError, match="object array"):
        accel.scan(list(dicts), lambda n: np.empty(n), *args)
    with pytest.raises(ZeroDivisionError):
        accel.scan(list(dicts), lambda n: 1 / 0, *args)
    assert accel.scan(list(dicts), lambda n: np.empty(n - 1, dtype=object), *args)[0] == 5  # too small

    def grows(n: int) -> np.ndarray:  # Python code between the passes changes the dicts and the list
        outer[0]["z"] = 9.0
        outer.append({"y": 1.0})
        return np.empty(n, dtype=object)

    outer = [dict(d) for d in dicts]
    assert accel.scan(outer, grows, *args)[0] == 5  # sizes changed: reported, never a write beyond the array

    def shrinks(n: int) -> np.ndarray:
        outer.clear()
        return np.empty(n, dtype=object)

    outer = [dict(d) for d in dicts]
    assert accel.scan(outer, shrinks, *args)[0] == 5
    gc.collect()


class EvilKey(str):
    """A lookup key whose ``__eq__`` (called on a hash collision) replaces the dict's contents."""

    def __hash__(self) -> int:
        return hash("target")

    def __eq__(self, other: object) -> bool:
        victim.clear()
        victim.update({f"n{i}": float(i) for i in range(100)})
        return False


victim: dict = {}


@needs_accel
def test_scan_lookup_survives_a_key_that_changes_the_dict():
    victim.clear()
    victim.update({"target": 1.0})
    find = np.array([EvilKey("zzz")], dtype=object)
    status, _, _, found = accel.scan([victim], None, np.array([0], dtype=I64), find, np.array([0], dtype=I64))
    assert status == 0 and np.isnan(np.frombuffer(found)).all()


@needs_accel
@pytest.mark.parametrize("state", [
    [-1, 0, 0, 0, -1, 0, 0, -1],  # a negative row
    [0, 10 ** 9, 0, 0, -1, 0, 0, -1],  # doc bytes beyond the output
    [0, 0, 0, 0, 10 ** 9, 4, 0, -1],  # a previous query outside the buffer
    [0, 0, 0, 0, 2, -3, 0, -1],  # a negative length
    [0, 0, 0],  # too short
])
def test_scan_trec_checks_the_state_it_is_given(state):
    data = b"q Q0 d 1 2 t\n" * 4
    n = 8
    outs = [np.empty(n), np.empty(n + 1, I64), np.empty(len(data), np.uint8), np.empty(n, I64),
            np.empty(n + 1, I64), np.empty(len(data), np.uint8), np.array(state, dtype=I64)]
    with pytest.raises(ValueError, match="scan_trec"):
        accel.scan_trec(data, 0, len(data), 6, 4, 2, False, *outs)


@needs_accel
def test_scan_trec_checks_range_and_layout():
    data = b"q Q0 d 1 2 t\n"
    outs = [np.empty(4), np.empty(5, I64), np.empty(20, np.uint8), np.empty(4, I64), np.empty(5, I64),
            np.empty(20, np.uint8), np.array([0, 0, 0, 0, -1, 0, 0, -1], I64)]
    for begin, end in ((0, len(data) + 1), (-1, 3), (5, 2)):
        with pytest.raises(ValueError):
            accel.scan_trec(data, begin, end, 6, 4, 2, False, *outs)
    with pytest.raises(ValueError, match="layout"):
        accel.scan_trec(data, 0, len(data), 6, 2, 2, False, *outs)


@needs_accel
def test_other_functions_refuse_inconsistent_offsets():
    with pytest.raises(ValueError):
        accel.sort_segments_desc(np.zeros(3), np.array([0, 5], dtype=I64), np.empty(3, I64), 0, 1)
    with pytest.raises(ValueError):
        accel.sort_segments_desc(np.zeros(3), np.array([0, 2, 1], dtype=I64), np.empty(3, I64), 0, 2)
    with pytest.raises(ValueError):
        accel.first_duplicate_in_segments(np.array([0, 1, 9], dtype=I64), b"ab", np.array([0, 2], dtype=I64))
    with pytest.raises(ValueError):
        accel.first_duplicate_in_segments(np.array([0, 1, 2], dtype=I64), b"ab", np.array([0, 3], dtype=I64))
    with pytest.raises(ValueError):
        accel.prefixes8(np.array([0, 4], dtype=I64), b"ab", np.empty(1, np.uint64))
    with pytest.raises(ValueError):
        accel.rank_in_segments(np.zeros(3), np.array([0], I64), np.array([5], I64), np.zeros(1), np.empty(1, I64),
                               np.empty(1, I64))


@needs_accel
@pytest.mark.parametrize("fn", ["first_nul", "str_ids"])
def test_id_searches_take_a_list_or_an_object_array_only(fn):
    f = getattr(accel, fn)
    for bad in (np.zeros(3), np.array(["a", "b"]), b"abc"):  # buffers of other formats
        with pytest.raises(TypeError, match=fn):
            f(bad)
    with pytest.raises(TypeError):  # not a buffer
        f(("a", "b"))
    ids = np.array(["a", "b\x00", "c"] * 3, dtype=object)
    found = f(ids[::-1].copy())
    assert (found if fn == "first_nul" else found[1]) == 1


@needs_accel
def test_file_map_is_read_only_and_refuses_close_while_exported(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"hello\nworld\n")
    with open(path, "rb") as f:
        fm = accel.FileMap(f.fileno())
    assert len(fm) == 12 and fm.find(b"\n") == 5 and fm.find(b"world", 3) == 6 and fm.find(b"zz") == -1
    view = memoryview(fm)
    assert view.readonly
    with pytest.raises(BufferError):
        fm.close()
    view.release()
    fm.close()
    with pytest.raises(ValueError):
        memoryview(fm)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with open(empty, "rb") as f, pytest.raises(ValueError):
        accel.FileMap(f.fileno())


# -- item 16: the visible warning when the build fell back ----------------------------------------------
def _without_accel(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where importing ragrade._accel fails (a build that fell back)."""
    prelude = ("import sys\n"
               "class Block:\n"
               "    def find_spec(self, name, path=None, target=None):\n"
               "        if name == 'ragrade._accel':\n"
               "            raise ImportError('no compiler at install time')\n"
               "sys.meta_path.insert(0, Block())\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "RAGRADE_NO_ACCEL"}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env, timeout=120)


def test_missing_build_warns_once_per_process():
    res = _without_accel(
        "import warnings, ragrade\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    for _ in range(3):\n"
        "        ragrade.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, ['ndcg@10'])\n"
        "from ragrade._native import AccelerationWarning\n"
        "got = [x for x in w if issubclass(x.category, AccelerationWarning)]\n"
        "print(len(got), 'not built' in str(got[0].message))\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["1", "True"]


def test_missing_build_is_a_note_on_the_command_line_and_in_version():
    res = _without_accel("import sys; sys.argv = ['ragrade', '--version']\nfrom ragrade.cli import main\nmain()")
    assert "C helper: not built" in res.stdout and "fallback" in res.stdout
    res = _without_accel("import sys; sys.argv = ['ragrade', 'metrics']\nfrom ragrade.cli import main\nmain()")
    assert res.returncode == 0, res.stderr
    assert res.stderr.count("note: ragrade's C helper is not built") == 1


def test_disabled_on_purpose_does_not_warn(monkeypatch):
    monkeypatch.setattr(_native, "accel", None)
    monkeypatch.setenv("RAGRADE_NO_ACCEL", "1")
    monkeypatch.setattr(_native, "_warned", False)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _native.warn_fallback()
    assert not w


def test_info_and_version_say_what_is_active():
    from click.testing import CliRunner

    from ragrade.cli import main

    res = CliRunner().invoke(main, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("ragrade ") and "C helper:" in res.output
    info = CliRunner().invoke(main, ["info", "--format", "json"])
    assert info.exit_code == 0
    import json

    data = json.loads(info.output)
    assert data["native"]["c_helper"] == ("active" if accel is not None else
                                          ("disabled" if _native.disabled_on_purpose() else "missing"))
    assert set(data["extras"]) >= {"llm", "text", "stats", "plots"}
    text = CliRunner().invoke(main, ["info"])
    assert "C helper:" in text.output and "extras:" in text.output
