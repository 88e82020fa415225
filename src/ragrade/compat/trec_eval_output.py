"""The trec_eval drop-in's output (:mod:`ragrade.compat.trec_eval`): the lines trec_eval 10 prints, byte for byte
(names 22 wide, ``%6.4f`` values, counts, ``runid``, ``relstring``, ``-Z`` z-scores), written in parts."""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from ragrade.compat.trec_eval_args import Options
from ragrade.compat.trec_eval_inputs import last_run_id, read_zscores
from ragrade.compat.trec_eval_plan import Planned, is_direct

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np



# -- computing and printing ------------------------------------------------------------------------------------


def _fmt(v: float, spec: str = "%6.4f") -> str:
    """A value as trec_eval prints it (C's ``%6.4f``; ``-nan`` for a NaN with its sign bit set)."""
    from ragrade.compat._trec_eval_c import printf

    return printf(spec, v)


def _c_nans(values: np.ndarray) -> np.ndarray:
    """A kernel column's NaN as trec_eval makes them: each stands for a 0 / 0, which on x86-64 is a NaN with its
    sign bit set (printed ``-nan``). Columns computed query by query carry C's own NaN (``nan`` for a gain given as
    ``nan``)."""
    import numpy as np

    bad = np.isnan(values)
    if not bad.any():
        return values
    out = values.copy()
    out[bad] = -math.nan
    return out


def write_parts(out: TextIO, parts: Iterator[str | bytes]) -> None:
    """Write the parts; bytes straight to the binary buffer of a UTF-8 text stream that has one (sys.stdout),
    where a line feed is written as it is (not on Windows)."""
    first = next(parts, None)  # computes everything up to the first part: errors are raised before any output
    buffer = getattr(out, "buffer", None)
    encoding = (getattr(out, "encoding", None) or "").lower().replace("-", "")
    direct = buffer is not None and encoding == "utf8" and os.linesep == "\n"
    if direct:
        out.flush()
    for part in itertools.chain(() if first is None else (first,), parts):
        if isinstance(part, bytes):
            if direct:
                buffer.write(part)  # type: ignore[union-attr]
            else:
                out.write(part.decode("utf-8"))
        else:
            if direct:
                buffer.write(part.encode("utf-8"))  # type: ignore[union-attr]
            else:
                out.write(part)
    if direct:
        buffer.flush()  # type: ignore[union-attr]


def _format(planned: list[Planned], opts: Options, qids: list[str], columns: dict[Any, Any],
            relstrings: dict[str, str], positive: int, run_path: str, value_format: str) -> str:
    """:func:`format_parts` as one string."""
    return "".join(p if isinstance(p, str) else p.decode("utf-8")
                   for p in format_parts(planned, opts, qids, columns, relstrings, positive, run_path, value_format))


def format_parts(planned: list[Planned], opts: Options, qids: list[str], columns: dict[Any, Any],
                  relstrings: dict[str, str], positive: int, run_path: str, value_format: str) -> Iterator[str | bytes]:
    """trec_eval's output from per-query values (``positive``: the judgments with a grade > 0, num_rel's
    summary under -c), in parts: the per-query lines in blocks of UTF-8 bytes, then the summary."""
    from ragrade.compat import _trec_eval_text as text_of

    out = _Lines(opts, qids, value_format, positive)
    runid = last_run_id(run_path) if any(p.measure.kind == "runid" for p in planned) else ""
    for p in planned:
        kind = p.measure.kind
        if kind == "runid":
            out.summary.append(f"{'runid':<22}\tall\t{runid}\n")
        elif kind == "count_q":
            text = str(len(qids)) if out.ztable is None else _fmt(float(len(qids)), value_format)
            out.summary.append(f"{out.z}{'num_q':<22}\tall\t{text}\n")
        elif kind == "relstring":
            if opts.query:
                out.heads.append(f"{p.names[0]:<22}")
                out.texts.append(text_of.strings([f"'{relstrings.get(q, '')}'" for q in qids]))
        else:
            for name, m in zip(p.names, p.metrics, strict=True):
                assert m is not None
                out.measure(p, name, columns[m] if is_direct(m) else _c_nans(columns[m]))
    if opts.query and out.texts:
        yield from text_of.lines(out.heads, out.texts, qids)
    if opts.summary:
        yield "".join(out.summary)


class _Lines:
    """The output being made: per-query columns (``heads``: each column's name, Z-prefixed and padded; ``texts``:
    its values, one per query, floats printed ``%6.4f`` or Arrow strings) and the summary lines."""

    def __init__(self, opts: Options, qids: list[str], value_format: str, positive: int) -> None:
        self.opts, self.qids, self.value_format, self.positive = opts, qids, value_format, positive
        self.ztable = read_zscores(opts.zscores) if opts.zscores is not None else None
        self.z = "Z" if self.ztable is not None else ""
        self.heads: list[str] = []
        self.texts: list[Any] = []
        self.summary: list[str] = []

    def values_text(self, values: Any) -> Any:
        """A float column as :func:`ragrade.compat._trec_eval_text.lines` prints it."""
        import numpy as np

        from ragrade.compat import _trec_eval_text as text_of

        if self.value_format == "%6.4f":
            return np.asarray(values, dtype=np.float64)
        return text_of.strings([_fmt(v, self.value_format) for v in values.tolist()])

    def per_query(self, head: str, text: Any) -> None:
        if self.opts.query:
            self.heads.append(head[:-1])
            self.texts.append(text)

    def measure(self, p: Planned, name: str, values: Any) -> None:
        """One output name's per-query column and summary line (its kind: a count, a geometric mean, a value)."""
        import numpy as np

        kind, head, fmt = p.measure.kind, f"{self.z}{name:<22}\t", self.value_format
        if kind == "gm":
            values = np.log(np.maximum(values, 1e-5))
        if self.ztable is not None:
            values = _to_zscores(self.ztable, self.qids, name, values)
        if kind == "long":
            total = self._count(p, head, values)
            text = str(int(total)) if self.ztable is None else _fmt(total, fmt)
            self.summary.append(f"{head}all\t{text}\n")
        elif kind == "gm":
            self.summary.append(f"{head}all\t{_fmt(math.exp(_seq_sum(values) / len(self.qids)), fmt)}\n")
        else:
            self.per_query(head, self.values_text(values))
            self.summary.append(f"{head}all\t{_fmt(_seq_sum(values) / len(self.qids), fmt)}\n")

    def _count(self, p: Planned, head: str, values: Any) -> float:
        """A count's per-query column (integers, or z-scores) and its summary total."""
        import numpy as np

        from ragrade.compat import _trec_eval_text as text_of

        if self.ztable is None:
            ints = np.trunc(values).astype(np.int64)
            if self.opts.query:  # (the texts of -q only)
                self.per_query(head, text_of.integers(ints))
            total: float = float(int(ints.sum()))
        else:
            self.per_query(head, self.values_text(values))
            total = _seq_sum(values)
        if p.measure.name == "num_rel" and self.opts.complete:
            total = float(self.positive)  # trec_eval -c: every judgment with a grade > 0
        return total


MISSING_ZSCORE = -1000000.0  # trec_eval's value for a query or measure the z-score file lacks


def _to_zscores(table: dict[str, dict[str, tuple[float, float]]], qids: list[str], name: str,
                values: np.ndarray) -> np.ndarray:
    """Each query's value as (value - mean) / stddev from the -Z table; MISSING_ZSCORE where the table has no
    line for the query or measure (or a zero stddev and another value), 0 for a zero stddev at the mean."""
    import numpy as np

    out = np.empty(len(values), dtype=np.float64)
    for i, (q, v) in enumerate(zip(qids, values.tolist(), strict=True)):
        entry = table.get(q, {}).get(name)
        if entry is None:
            out[i] = MISSING_ZSCORE
            continue
        mean, sd = entry
        if sd:
            out[i] = (v - mean) / sd
        else:
            out[i] = 0.0 if v == mean else MISSING_ZSCORE
    return out


def _seq_sum(values: np.ndarray) -> float:
    """The sum added query by query, in order (as trec_eval accumulates its averages). With a NaN or an infinity
    among the values it is added one by one as trec_eval's x86-64 code adds (each query's value is the first
    operand): a query's NaN replaces the sum, a NaN sum stays, and inf + -inf is the x86 NaN (sign bit set);
    so the sign of a NaN in the summary is the one trec_eval prints."""
    import numpy as np

    if not len(values):
        return 0.0
    if np.isfinite(values).all():
        return float(np.cumsum(values)[-1])
    total = 0.0
    for v in values.tolist():
        if v != v:
            total = v
        elif total == total:
            total = total + v
            if total != total:
                total = -math.nan
    return total


def relstring_texts(p: Planned, columns: dict[Any, Any], qids: list[str], num_ret: Any) -> dict[str, str]:
    """trec_eval's relstring from ``grade_at@1..N``: one character per retrieved document of the first N (its
    grade 0-9, '>' above 9, '-' without a judgment, '.' a negative grade)."""
    import numpy as np

    n_ret = columns[num_ret]
    text = np.full(len(qids), "", dtype=object)
    for k, m in enumerate(p.parts, start=1):
        g = columns[m]
        char = np.full(len(qids), "-", dtype=object)
        judged = ~np.isnan(g)
        gg = np.where(judged, g, 0).astype(np.int64)
        char[judged & (gg < 0)] = "."
        char[judged & (gg > 9)] = ">"
        digits = judged & (gg >= 0) & (gg <= 9)
        char[digits] = np.array([str(v) for v in range(10)], dtype=object)[gg[digits]]
        text = np.where(n_ret >= k, text + char, text)
    return dict(zip(qids, text.tolist(), strict=True))
