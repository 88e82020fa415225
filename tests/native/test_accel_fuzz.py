"""Byte-level fuzz of the C helper (issue 11, item 15): the TREC scanner against a plain-Python reading of
its contract, the file readers' fast path against the careful one, and the dict scan against the
pure-Python fallback, on randomly mutated inputs.

Each fuzz runs for ``RAGRADE_FUZZ_SECONDS`` seconds (default 2; the sanitizer job of ``.ci/run`` gives
each 45 s under AddressSanitizer and UndefinedBehaviorSanitizer, where any out-of-bounds
access or use-after-free stops the process). Inputs come from ``random.Random(RAGRADE_FUZZ_SEED + i)``,
so a failure names the seed that reproduces it.
"""

from __future__ import annotations

import os
import random
import re
import time

import numpy as np
import pytest

from ragrade import _ingest, read_qrels, read_run
from ragrade.errors import RagradeError
from ragrade.io import trec

accel = _ingest._accel
pytestmark = pytest.mark.skipif(accel is None, reason="the C helper is not built (or RAGRADE_NO_ACCEL is set)")

SECONDS = float(os.environ.get("RAGRADE_FUZZ_SECONDS", "2"))
SEED = int(os.environ.get("RAGRADE_FUZZ_SEED", "0"))
I64 = np.int64
NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _seeds():
    """Seeds until the time budget is spent (at least 20)."""
    stop = time.monotonic() + SECONDS
    i = 0
    while i < 20 or time.monotonic() < stop:
        yield SEED + i
        i += 1


# -- inputs ---------------------------------------------------------------------------------------------
_NUMBERS = ["1", "0.5", "-3", "+2.25", ".5", "5.", "1e3", "2.5E-7", "-0", "0001.100", "123456789012345678901",
            "1e400", "4.9e-324", "17976931348623157e292", "3.14159265358979323846264338327950288"]
_ALPHABET = [*b" \n\n\n\t#.eE+-0123456789Q", 0x00, 0x01, 0x0b, 0x0c, 0x0d, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xe2,
             0xed, 0xf0, 0xf4, 0xf5, 0xff]
_UTF8 = ["é", "€", "𝄞", "日本", "\u00a0", "\ud7ff", "\U0010ffff"]


def _valid_trec(rng: random.Random, ncols: int, numcol: int, doccol: int) -> bytes:
    lines = []
    queries = [f"q{rng.randrange(50)}" + (rng.choice(_UTF8) if rng.random() < 0.1 else "") for _ in range(5)]
    for _ in range(rng.randrange(1, 40)):
        fields = [f"x{rng.randrange(9)}" for _ in range(ncols)]
        fields[0] = rng.choice(queries)
        fields[doccol] = f"d{rng.randrange(10 ** rng.randrange(1, 12))}" + (rng.choice(_UTF8) if rng.random() < 0.1 else "")
        fields[numcol] = rng.choice(_NUMBERS)
        lines.append((" " if rng.random() < 0.7 else "\t").join(fields) if rng.random() < 0.9
                     else "".join(f + rng.choice(" \t") for f in fields[:-1]) + fields[-1])
        if rng.random() < 0.05:
            lines.append("")
    text = "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")
    return text.encode("utf-8", errors="surrogatepass")


def _mutate(rng: random.Random, data: bytes, n: int) -> bytes:
    b = bytearray(data)
    for _ in range(n):
        op = rng.random()
        pos = rng.randrange(len(b) + 1)
        if op < 0.4 and b:
            b[min(pos, len(b) - 1)] = rng.choice(_ALPHABET)
        elif op < 0.7:
            b[pos:pos] = bytes([rng.choice(_ALPHABET)]) if rng.random() < 0.8 else rng.choice(_UTF8).encode(
                "utf-8", errors="surrogatepass")
        elif b:
            del b[min(pos, len(b) - 1)]
    return bytes(b)


# -- the scanner's contract in plain Python --------------------------------------------------------------
def _reference(buf: bytes, ncols: int, numcol: int, doccol: int):
    """Rows ``(query, doc, value)`` as ``scan_trec`` must read ``buf``, or None where it must decline."""
    rows = []
    for line in buf.split(b"\n"):
        if line == b"":
            continue
        if any(c < 0x20 and c != 0x09 for c in line):
            return None
        fields = line.replace(b"\t", b" ").split(b" ")  # one space or one tab between fields
        if len(fields) != ncols or b"" in fields or fields[0][:1] == b"#" or not NUMBER.fullmatch(fields[numcol]):
            return None
        try:
            q, d = fields[0].decode("utf-8"), fields[doccol].decode("utf-8")
        except UnicodeDecodeError:
            return None
        rows.append((q, d, float(fields[numcol])))
    return rows


def _outputs(buf_len: int, rows_cap: int):
    return [np.empty(rows_cap), np.empty(rows_cap + 1, I64), np.empty(buf_len + 1, np.uint8), np.empty(rows_cap, I64),
            np.empty(rows_cap + 1, I64), np.empty(buf_len + 1, np.uint8), np.array([0, 0, 0, 0, -1, 0, 0, -1], I64)]


def _decode(outs):
    vals, doc_off, doc_data, seg_row, q_off, q_data, state = outs
    rows, dbytes, nseg, qbytes = (int(x) for x in state[:4])
    docs = [bytes(doc_data[doc_off[i]: doc_off[i + 1]]).decode() for i in range(rows)]
    qids = [bytes(q_data[q_off[i]: q_off[i + 1]]).decode() for i in range(nseg)]
    assert doc_off[rows] == dbytes and q_off[nseg] == qbytes
    return list(vals[:rows]), docs, list(seg_row[:nseg]), qids


def _check_scan(buf: bytes, begin: int, end: int, ncols: int, numcol: int, doccol: int, cuts: list[int],
                rows_cap: int, seed: int) -> None:
    outs = _outputs(len(buf), rows_cap)
    for a, z in zip([begin, *cuts], [*cuts, end], strict=True):  # windows continue one state
        accel.scan_trec(buf, a, z, ncols, numcol, doccol, False, *outs)
        if outs[6][6] != 0:
            break
    status = int(outs[6][6])
    expected = _reference(buf[begin:end], ncols, numcol, doccol)
    if status == 2:  # the outputs were too small: the caller falls back
        assert rows_cap < len(buf), seed
        return
    assert (status == 0) == (expected is not None), (seed, status, buf[begin:end][:200])
    if expected is None:
        return
    vals, docs, seg_row, qids = _decode(outs)
    assert docs == [d for _, d, _ in expected], seed
    np.testing.assert_array_equal(vals, [v for _, _, v in expected], err_msg=str(seed))
    runs = [i for i in range(len(expected)) if i == 0 or expected[i][0] != expected[i - 1][0]]
    assert seg_row == runs and qids == [expected[i][0] for i in runs], seed


def test_fuzz_scan_trec_against_its_contract():
    n = 0
    for seed in _seeds():
        rng = random.Random(seed)
        ncols, numcol, doccol = rng.choice([(6, 4, 2), (4, 3, 2), (3, 2, 1)])
        buf = _mutate(rng, _valid_trec(rng, ncols, numcol, doccol), rng.choice([0, 0, 1, 2, 5, 20]))
        begin, end = 0, len(buf)
        if rng.random() < 0.3 and buf:  # a sub-range, as the threads of the reader scan
            begin = rng.randrange(len(buf))
            end = rng.randrange(begin, len(buf) + 1)
        # windows cut right after a newline (the reader's rule); the state carries the last query id
        newlines = [i + 1 for i in range(begin, end) if buf[i] == 10 and i + 1 < end]
        cuts = sorted(rng.sample(newlines, min(len(newlines), rng.randrange(3))))
        rows_cap = len(buf) + 1 if rng.random() < 0.85 else rng.randrange(0, 6)
        _check_scan(buf, begin, end, ncols, numcol, doccol, cuts, rows_cap, seed)
        n += 1
    print(f"scan_trec: {n} mutated inputs")
    assert n >= 20


def test_fuzz_readers_fast_path_equals_careful_path(tmp_path):
    n = 0
    for seed in _seeds():
        rng = random.Random(seed)
        kind = rng.choice(["run", "qrels"])
        ncols, numcol, doccol = (6, 4, 2) if kind == "run" else (4, 3, 2)
        data = _mutate(rng, _valid_trec(rng, ncols, numcol, doccol), rng.choice([0, 1, 3, 8]))
        path = tmp_path / f"f{seed % 7}.txt"
        path.write_bytes(data)
        reader = read_run if kind == "run" else read_qrels
        outcomes = []
        for chunk in (trec.CHUNK_SIZE, 13):  # the C scanner (or pyarrow) / the careful chunked reader
            try:
                got = reader(path, chunk_size=chunk)
                outcomes.append(("ok", got.to_dict(), got.n_queries))
            except RagradeError as exc:
                outcomes.append(("error", type(exc).__name__, getattr(exc, "line", None)))
        assert outcomes[0] == outcomes[1], (seed, outcomes, data[:300])
        n += 1
    print(f"readers: {n} mutated files")
    assert n >= 20


# -- the dict scan ---------------------------------------------------------------------------------------
class Floaty:
    def __init__(self, x: float) -> None:
        self.x = x

    def __float__(self) -> float:
        return self.x


class Mutator:
    """``__float__`` changes a dict of the list: the scan must report it or go on, never crash."""

    def __init__(self, target: dict, rng: random.Random) -> None:
        self.target, self.rng = target, rng

    def __float__(self) -> float:
        action = self.rng.randrange(3)
        if action == 0:
            self.target.clear()
        elif action == 1:
            self.target.update({f"new{i}": 1.0 for i in range(self.rng.randrange(1, 30))})
        else:
            self.target.pop(next(iter(self.target), None), None)
        return 0.5


def _value(rng: random.Random):
    r = rng.random()
    if r < 0.5:
        return rng.uniform(-10, 10)
    if r < 0.7:
        return rng.randrange(-5, 100)
    return rng.choice([True, False, None, "1.5", float("nan"), float("inf"), 10 ** 400, np.float64(2.5),
                       np.int32(7), Floaty(3.25), [1], object(), np.bool_(True), np.float32(0.5)])


def _key(rng: random.Random):
    r = rng.random()
    if r < 0.9:
        return f"k{rng.randrange(30)}" + ("é" if rng.random() < 0.05 else "")
    return rng.choice(["", 3, 2.5, ("t",), b"bytes", "k\x00", "\x00", "Ā\x00x", "\U0001f600\x00", "Āk"])


def _dicts(rng: random.Random, evil: bool):
    dicts = []
    for _ in range(rng.randrange(0, 12)):
        if rng.random() < 0.03:
            dicts.append(rng.choice([[("a", 1.0)], "not a dict", None]))
            continue
        d = {}
        for _ in range(rng.randrange(0, 8)):
            d[_key(rng)] = _value(rng)
        dicts.append(d)
    if evil and dicts and isinstance(dicts[0], dict):
        victim = rng.choice([d for d in dicts if isinstance(d, dict)])
        dicts[0][f"evil{rng.randrange(9)}"] = Mutator(victim, rng)
    return dicts


def test_fuzz_dict_scan_against_the_fallback():
    n = 0
    for seed in _seeds():
        rng = random.Random(seed)
        evil = rng.random() < 0.2
        dicts = _dicts(rng, evil)
        c_status, c_counts, c_values, c_keys = _ingest.scan_items(dicts, use_accel=True)
        if evil:  # the dicts changed under the scan: any status, no crash, and the outputs are sized right
            assert c_status in (0, 1, 2, 3, 4, 5, 6)
            continue
        p_status, p_counts, p_values, p_keys = _ingest.scan_items(dicts, use_accel=False)
        refused = any(isinstance(d, dict) and (any(isinstance(k, str) and "\x00" in k for k in d)
                                               or any(type(v) in (bool, np.bool_) for v in d.values()))
                      for d in dicts)
        if refused:  # the id rule: a NUL in a key, a boolean value; both scans stop, the careful path decides
            assert c_status != 0 and p_status != 0, seed
        if c_status == 0 and not np.isnan(c_values).any():  # (the C scan is the stricter one: a refusal
            assert p_status == 0, seed  # sends the input to the checking path, which decides)
            np.testing.assert_array_equal(c_counts, p_counts, err_msg=str(seed))
            np.testing.assert_array_equal(c_values, p_values, err_msg=str(seed))
            assert list(c_keys) == list(p_keys), seed
        # what users see is the same either way: the same run, or the same error
        assert _as_run(dicts, monkeypatch=None) == _as_run(dicts, monkeypatch=True), seed
        if c_status == 0 and dicts:
            m = rng.randrange(0, 20)
            which = np.array([rng.randrange(len(dicts)) for _ in range(m)], dtype=I64)
            keys = np.array([_key(rng) if rng.random() < 0.2 else f"k{rng.randrange(30)}" for _ in range(m)],
                            dtype=object)
            got = _ingest.scan_join(dicts, which, keys, use_accel=True)[3]
            want = np.array([_lookup(dicts[w], k) for w, k in zip(which, keys, strict=True)], dtype=np.float64)
            np.testing.assert_array_equal(got, want, err_msg=str(seed))
        n += 1
    print(f"dict scan: {n} random lists of dicts")
    assert n >= 10


def _as_run(dicts: list, monkeypatch: object) -> object:
    from ragrade import Run
    from ragrade.errors import RagradeError

    real = _ingest._accel
    run = {f"q{i}": d for i, d in enumerate(dicts)}
    try:
        if monkeypatch is not None:
            _ingest._accel = None
        return ("ok", Run.from_dict(run).to_dict())
    except RagradeError as exc:
        return ("error", str(exc))
    finally:
        _ingest._accel = real


def _lookup(d: dict, key) -> float:
    try:
        v = d.get(key, np.nan)
    except TypeError:  # an unhashable key
        return np.nan
    try:
        return float(v)
    except (TypeError, ValueError, OverflowError):
        return np.nan
