"""Inputs that used to break or hang (issue 23, items 4-6): pipes and devices, very long lines, NUL bytes
in ids, booleans as numbers, an id listed twice in one gold group. Every case runs the command line in a
child process under a time limit and asserts the exit status, that no traceback is printed and what the
error names; the reads that could grow memory run under an address-space limit (``RLIMIT_AS``)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ragrade
from ragrade.errors import ParseError

SRC = str(Path(__file__).resolve().parents[2] / "src")
QRELS = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(4) for d in range(5))
RUN = "".join(f"q{q} Q0 d{(d * (2 * q + 3)) % 8} {d + 1} {10 - d} tag\n" for q in range(4) for d in range(8))
LIMIT_S = 60  # each child process (the CLI starting up takes about a second)


def cli(*args: str, env: dict[str, str] | None = None, stdin: object = subprocess.DEVNULL, memory: int | None = None,
        shell: bool = False, timeout: float = LIMIT_S, file_size: int | None = None) -> subprocess.CompletedProcess[str]:
    """``ragrade`` in a child process (``shell``: ``args[0]`` is a bash command line, for ``<(...)``)."""
    full_env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env or {})}

    def limit() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if file_size is not None:  # a "full disk" for the copy of a pipe
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    cmd: list[str] | str = ["bash", "-c", args[0]] if shell else [sys.executable, "-m", "ragrade", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, stdin=stdin,  # type: ignore[arg-type]
                          preexec_fn=limit)


def ok(p: subprocess.CompletedProcess[str]) -> None:
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr


def refused(p: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return q, r


def expected(q: Path, r: Path) -> float:
    return ragrade.evaluate(str(q), str(r), ["ndcg@10"]).means["ndcg@10"]


# -- item 4: pipes, FIFOs, devices -------------------------------------------------------------------------------
PY = f"{sys.executable} -m ragrade"


@pytest.mark.parametrize("how", ["cat", "zcat", "both"])
def test_process_substitution_is_read_as_a_stream(files, how, tmp_path):
    q, r = files
    gz = tmp_path / "run.txt.gz"
    subprocess.run(["gzip", "-k", "-c", str(r)], stdout=gz.open("wb"), check=True)
    run_arg = f"<(cat {r})" if how == "cat" else f"<(zcat {gz})"
    qrels_arg = f"<(cat {q})" if how == "both" else str(q)
    p = cli(f"{PY} evaluate {qrels_arg} {run_arg} -m ndcg@10 --format json", shell=True)
    ok(p)
    import json

    assert json.loads(p.stdout)["metrics"]["ndcg@10"] == pytest.approx(expected(q, r), abs=1e-12)


def test_dev_stdin_pipe_and_redirect(files):
    q, r = files
    with r.open("rb") as fh:  # a regular file behind /dev/stdin
        ok(cli("evaluate", str(q), "/dev/stdin", "-m", "ndcg@10", stdin=fh))
    p = subprocess.Popen(["cat", str(r)], stdout=subprocess.PIPE)  # a pipe behind /dev/stdin
    try:
        ok(cli("evaluate", str(q), "/dev/stdin", "-m", "ndcg@10", stdin=p.stdout))
    finally:
        p.wait()


def test_stdin_as_a_stream_in_python(files, monkeypatch):
    _q, r = files
    read, write = os.pipe()
    threading.Thread(target=lambda: (os.write(write, RUN.encode()), os.close(write)), daemon=True).start()
    run = ragrade.read_run(f"/dev/fd/{read}")
    os.close(read)
    assert run.to_dict() == ragrade.read_run(str(r)).to_dict()


def test_fifo_without_a_writer_does_not_hang(files, tmp_path):
    q, _ = files
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    line = refused(cli("evaluate", str(q), str(fifo), "-m", "ndcg@10", env={"RAGRADE_PIPE_TIMEOUT": "1"}, timeout=30),
                   str(fifo), "waited 1 s", "RAGRADE_PIPE_TIMEOUT")
    assert "nothing was written" in line


def test_fifo_with_a_writer_is_read(files, tmp_path):
    _q, r = files
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "w") as fh:
            fh.write(RUN)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGRADE_PIPE_TIMEOUT", "20")
        run = ragrade.read_run(str(fifo))
    t.join(5)
    assert run.name == "tag" and run.to_dict() == ragrade.read_run(str(r)).to_dict()


def test_error_in_a_piped_file_names_the_pipe(files):
    q, _ = files
    line = refused(cli(f"{PY} evaluate {q} <(printf 'q1 Q0 d1 1 2 tag\\nq1 Q0 d2 2 x tag\\n') -m ndcg@10",
                       shell=True), "/dev/fd/", ":2:", "not a number")
    assert "ragrade-pipe-" not in line  # the copy is never named


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_character_devices_are_refused_quickly(files, device):
    q, r = files
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    refused(cli("evaluate", device, str(r), "-m", "ndcg@10", memory=2 << 30, timeout=30),
            device, "character device", "not a file or a pipe")
    refused(cli("evaluate", str(q), device, "-m", "ndcg@10", memory=2 << 30, timeout=30), device, "character device")
    with pytest.raises(ParseError, match="character device"):
        ragrade.read_qrels(device)


def test_dev_zero_through_a_pipe_is_bounded(files):
    """No line break in sight: the copy of the pipe stops at the line limit, in bounded memory."""
    q, _ = files
    zero = subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE)
    try:
        refused(cli("evaluate", str(q), "/dev/stdin", "-m", "ndcg@10", stdin=zero.stdout, memory=2 << 30, timeout=60),
                "/dev/stdin", "longer than 64 MiB")
    finally:
        zero.kill()
        zero.wait()


def test_endless_pipe_that_fills_the_disk_is_an_error(files):
    q, _ = files
    p = subprocess.Popen(["yes", "q1 Q0 d1 1 1.5 tag"], stdout=subprocess.PIPE)
    try:
        refused(cli("evaluate", str(q), "/dev/stdin", "-m", "ndcg@10", stdin=p.stdout, file_size=1 << 20),
                "/dev/stdin", "cannot copy the pipe to a temporary file", "endless")
    finally:
        p.kill()
        p.wait()


def test_file_without_line_breaks_is_bounded(files, tmp_path):
    q, _ = files
    blob = tmp_path / "zeros.txt"
    with blob.open("wb") as fh:
        fh.truncate(200 << 20)  # a sparse file of 200 MB of NUL bytes
    for env in ({}, {"RAGRADE_NO_ACCEL": "1"}):
        refused(cli("evaluate", str(q), str(blob), "-m", "ndcg@10", env=env, memory=2 << 30),
                str(blob), ":1:", "longer than 64 MiB")


def test_directory_and_missing_file(files, tmp_path):
    q, _ = files
    refused(cli("evaluate", str(q), str(tmp_path), "-m", "ndcg@10"), str(tmp_path), "directory")
    refused(cli("evaluate", str(q), str(tmp_path / "nope.txt"), "-m", "ndcg@10"), "nope.txt", "no such file")


# -- item 5: long lines ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [70_000, 10_000_000])
@pytest.mark.parametrize("accel", ["1", "0"])
def test_long_first_line(tmp_path, length, accel):
    long_id = "x" * length
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(f"{long_id} 0 d1 1\n" + QRELS)
    r.write_text(f"{long_id} Q0 d1 1 10 tag\n" + RUN)
    env = {"RAGRADE_NO_ACCEL": "1"} if accel == "0" else {}
    p = cli("evaluate", str(q), str(r), "-m", "ndcg@10", "--format", "json", "--per-query", env=env)
    ok(p)
    import json

    got = json.loads(p.stdout)
    assert got["metrics"]["ndcg@10"] == pytest.approx(expected(q, r), abs=1e-12)
    assert got["per_query"][long_id]["ndcg@10"] == 1.0  # its one relevant document at rank 1
    assert len(got["per_query"]) == 5


def test_long_line_in_the_middle_and_a_long_tsv_header(tmp_path):
    long_id = "y" * 100_000
    r = tmp_path / "run.tsv"
    r.write_text("query\tdoc\tscore\n" + f"q1\t{long_id}\t3\nq1\td2\t2\n")
    assert ragrade.read_run(str(r)).to_dict() == {"q1": {long_id: 3.0, "d2": 2.0}}
    t = tmp_path / "run.txt"
    t.write_text("q1 Q0 d2 1 3 t\n" + f"q1 Q0 {long_id} 2 2 t\n")
    assert ragrade.read_run(str(t)).to_dict() == {"q1": {"d2": 3.0, long_id: 2.0}}


# -- item 6: one rule each ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("accel", ["1", "0"])
@pytest.mark.parametrize("which", ["qrels-doc", "qrels-query", "run-doc"])
def test_nul_in_trec_ids_is_refused(tmp_path, accel, which):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    qrels, run = QRELS, RUN
    if which == "qrels-doc":
        qrels = QRELS + "q9 0 d\x001 1\n"
    elif which == "qrels-query":
        qrels = QRELS + "q\x009 0 d1 1\n"
    else:
        run = RUN + "q9 Q0 d\x001 1 1 tag\n"
    q.write_text(qrels)
    r.write_text(run)
    env = {"RAGRADE_NO_ACCEL": "1"} if accel == "0" else {}
    bad = q if which.startswith("qrels") else r
    line = len((qrels if which.startswith("qrels") else run).splitlines())
    refused(cli("evaluate", str(q), str(r), "-m", "ndcg@10", env=env), f"{bad}:{line}:", "NUL byte")


@pytest.mark.parametrize("fmt", ["tsv", "csv", "jsonl", "parquet"])
def test_nul_in_table_ids_is_refused(tmp_path, fmt):
    path = tmp_path / f"qrels.{fmt}"
    rows = {"query": ["q1", "q1"], "doc": ["d1", "d\x002"], "grade": [1, 2]}
    if fmt == "parquet":
        pq.write_table(pa.table(rows), path)
    elif fmt == "jsonl":
        import json

        path.write_text("".join(json.dumps(dict(zip(rows, v, strict=True))) + "\n" for v in zip(*rows.values(),
                                                                                                  strict=True)))
    else:
        sep = "\t" if fmt == "tsv" else ","
        path.write_text(f"query{sep}doc{sep}grade\nq1{sep}d1{sep}1\nq1{sep}d\x002{sep}2\n")
    with pytest.raises(ParseError, match="NUL byte") as got:
        ragrade.read_qrels(str(path))
    assert str(path) in str(got.value)
    if fmt != "parquet":
        assert got.value.line == (2 if fmt == "jsonl" else 3)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_boolean_grades_and_scores_are_refused(tmp_path, fmt, kind):
    col = "grade" if kind == "qrels" else "score"
    path = tmp_path / f"{kind}.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.table({"query": ["q1", "q1"], "doc": ["d1", "d2"], col: [True, False]}), path)
    elif fmt == "jsonl":
        path.write_text(f'{{"query": "q1", "doc": "d1", "{col}": true}}\n{{"query": "q1", "doc": "d2", "{col}": false}}\n')
    else:
        sep = "\t" if fmt == "tsv" else ","
        path.write_text(f"query{sep}doc{sep}{col}\nq1{sep}d1{sep}true\nq1{sep}d2{sep}false\n")
    reader = ragrade.read_qrels if kind == "qrels" else ragrade.read_run
    with pytest.raises(ParseError, match=f"the {col} column holds booleans") as got:
        reader(str(path))
    assert str(path) in str(got.value)


def test_trec_boolean_grade_is_refused_too(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text("q1 0 d1 true\n")
    with pytest.raises(ParseError, match="not a number"):
        ragrade.read_qrels(str(q))


def test_id_twice_in_one_gold_group_is_refused(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text('{"query": "q1", "groups": [["d1"], ["d2"]]}\n{"query": "q2", "groups": [["d1", "d1"], ["d2"]]}\n')
    with pytest.raises(ParseError, match="'d1' is listed twice in one group of query 'q2'") as got:
        ragrade.read_qrels(str(path))
    assert got.value.line == 2
    same = tmp_path / "ok.jsonl"  # one document in two groups is fine (either of them satisfies the query)
    same.write_text('{"query": "q1", "groups": [["d1", "d2"], ["d1"]]}\n')
    assert ragrade.read_qrels(str(same)).has_groups


def test_gold_list_and_rows_twice_are_refused_alike(tmp_path):
    rows = tmp_path / "qrels.jsonl"
    rows.write_text('{"query": "q1", "doc": "d1", "grade": 1}\n{"query": "q1", "doc": "d1", "grade": 1}\n')
    lists = tmp_path / "gold.jsonl"
    lists.write_text('{"query": "q1", "gold": ["d1", "d2", "d1"]}\n')
    trec = tmp_path / "qrels.txt"
    trec.write_text("q1 0 d1 1\nq1 0 d1 1\n")
    for path in (rows, lists, trec):
        with pytest.raises(ParseError, match="'d1' is judged twice for query 'q1'"):
            ragrade.read_qrels(str(path))
