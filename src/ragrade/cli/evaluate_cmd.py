"""``ragrade evaluate QRELS RUN -m METRIC ...``: score a run file against a ground-truth file."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import click

from ragrade.cli._loop import finish, loop_options, pop_loop_options
from ragrade.cli._output import input_errors, number, reading_all, run_names, stderr_console, stdout_console
from ragrade.io import FORMATS
from ragrade.policies import Policies

OUTPUT_FORMATS = ("table", "json", "csv", "markdown")

_POLICY_HELP = {
    "missing_run": "Query in the ground truth but not in the run",
    "missing_qrels": "Query in the run but not in the ground truth",
    "no_relevant": "Query with no relevant judgment (R = 0)",
    "duplicates": "Same item twice in one ranking",
    "ties": "Order of equal scores",
    "identical_ids": "Items whose id equals the query id",
    "empty_run": "Query with an empty retrieved list",
    "unjudged": "Retrieved document without a judgment: nonrelevant (trec_eval), condensed (removed before "
                "scoring, as trec_eval -J), bounds (lower and upper bound)",
}


def _policy_options(f):
    defaults = Policies()
    for name, choices in reversed(list(Policies.choices().items())):
        flag = "--" + name.replace("_", "-")
        f = click.option(
            flag, name, type=click.Choice(choices), default=None,
            help=f"{_POLICY_HELP.get(name, name)} (default: {getattr(defaults, name)}).",
        )(f)
    return f


@click.command(name="evaluate")
@click.argument("qrels", type=click.Path())
@click.argument("run", type=click.Path())
@click.option("-m", "--metric", "metrics", multiple=True, required=True, metavar="METRIC",
              help="Metric to compute, e.g. ndcg@10, 'recall@[5,10]', 'precision(rel=2)@5'. Repeatable.")
@click.option("--per-query", is_flag=True, help="Also output the value of every query.")
@click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default="table", show_default=True,
              help="Output format.")
@click.option("--qrels-format", type=click.Choice(FORMATS), default=None,
              help="Format of QRELS (default: from the extension).")
@click.option("--run-format", type=click.Choice(FORMATS), default=None,
              help="Format of RUN (default: from the extension).")
@click.option("--digits", type=click.IntRange(0, 17), default=4, show_default=True,
              help="Decimals shown in table, csv and markdown output (json is exact).")
@click.option("--profile", default=None, metavar="PROFILE",
              help="Score under a peer's conventions (autorag, ragas, continuous-eval, remem, llamaindex, "
                   "deepeval, trec_eval, pytrec_eval, beir, ir_measures, ranx). See docs/profiles.md.")
@click.option("--name", "run_name", default=None, metavar="NAME",
              help="Name of the run in the output (default: the file name without extension, as in compare).")
@click.option("--names", type=click.Choice(["ragrade", "trec_eval"]), default=None,
              help="How bare metric names are read: trec_eval reads every trec_eval name as trec_eval does "
                   "(recall = recall_5 ... recall_1000); ragrade keeps ragrade's meaning of its own family names "
                   "(recall = the whole list's recall) and reads every other trec_eval name as trec_eval does. "
                   "Default: trec_eval under --profile trec_eval or pytrec_eval, else ragrade.")
@click.option("-M", "--max-docs", "max_docs", type=click.IntRange(min=1), default=None,
              help="trec_eval -M: read only the first N documents of each ranking.")
@click.option("-J", "--judged-only", "judged_only", is_flag=True,
              help="trec_eval -J: remove unjudged documents before scoring (same as --unjudged condensed).")
@click.option("-l", "--level", "rel_level", type=click.IntRange(min=1), default=None,
              help="trec_eval -l: relevance level of every metric not given one (e.g. P(rel=2)@5).")
@click.option("-c", "--complete", is_flag=True,
              help="trec_eval -c: queries of QRELS missing from RUN score 0 (ragrade's default; needed with "
                   "--profile trec_eval, which leaves them out).")
@click.option("-N", "--num-docs", "num_docs", type=click.IntRange(min=0), default=None,
              help="trec_eval -N: documents in the collection (utility's fourth coefficient).")
@click.option("--upper-grade", type=click.FloatRange(min=0, min_open=True), default=None,
              help="With --unjudged bounds: the grade of an unjudged document in the upper bound "
                   "(default: the highest grade in QRELS).")
@click.option("--hole-threshold", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="Warn when the mean hole rate (share of unjudged documents in the top k) exceeds it.")
@click.option("--max-memory", default=None, metavar="SIZE",
              help="Evaluate in about SIZE of memory (e.g. 4GiB), reading the files piece by piece; same "
                   "results. Files too large for the memory available are read so anyway. See docs/scale.md.")
@click.option("--engine", type=click.Choice(["memory", "spark"]), default="memory", show_default=True,
              help="Where to evaluate: in this process, or on Spark (pip install 'ragrade[spark]'; the files "
                   "are read by Spark: Parquet, Delta, CSV/TSV with a header, TREC). See docs/scale.md.")
@click.option("--master", default="local[2]", show_default=True, metavar="URL",
              help="Spark master for --engine spark (unless a Spark session is already running).")
@_policy_options
@loop_options
def command(qrels: str, run: str, metrics: tuple[str, ...], per_query: bool, fmt: str, qrels_format: str | None,
            run_format: str | None, digits: int, profile: str | None = None, names: str | None = None,
            max_docs: int | None = None, judged_only: bool = False, rel_level: int | None = None,
            complete: bool = False, num_docs: int | None = None, upper_grade: float | None = None,
            hole_threshold: float = 0.1, max_memory: str | None = None, engine: str = "memory",
            master: str = "local[2]", run_name: str | None = None, **policies: Any) -> None:
    """Score RUN against the ground truth QRELS.

    Formats are detected from the file extensions (TREC, TSV/CSV, JSONL, Parquet, optionally
    gzipped). Results go to stdout; warnings about undefined cases go to stderr. Under the table:
    the hole rate (the share of each query's top-k documents without a judgment).

    trec_eval's measure names and options work as in trec_eval: -m P, -m ndcg_cut.5,10, -m all_trec,
    -M, -J, -l, -c, -N (see docs/metrics.md).

    \b
    Examples:
      ragrade evaluate examples/qrels.tsv examples/run.tsv -m ndcg@10 -m recall@5
      ragrade evaluate qrels.txt run.txt -m all_trec --names trec_eval --per-query --format json
    """
    from ragrade.engine.api import evaluate
    from ragrade.engine.inputs import read_both
    from ragrade.engine.result import metric_labels
    from ragrade.errors import PolicyError, RagradeWarning

    loop = pop_loop_options(policies)
    label = run_names([run], [run_name] if run_name else [])[0]
    with input_errors():
        if judged_only:
            if policies.get("unjudged") not in (None, "condensed"):
                raise PolicyError("-J/--judged-only and --unjudged " + str(policies["unjudged"]) + " disagree")
            policies["unjudged"] = "condensed"
        if complete:
            if policies.get("missing_run") not in (None, "zero"):
                raise PolicyError("-c/--complete and --missing-run " + str(policies["missing_run"]) + " disagree")
            policies["missing_run"] = "zero"
        if names is None:
            from ragrade.profiles import profile_names

            names = profile_names(profile)
        labels = metric_labels(list(metrics), names=names, rel_level=rel_level)  # type: ignore[arg-type]  # fail on a typo first
        if all(m.family.kind == "diversity" for _, m in labels):  # subtopic judgments: qid subtopic docno rel
            from ragrade.engine.diversity import evaluate_diversity
            from ragrade.io import read_run

            result = evaluate_diversity(qrels, read_run(run, format=run_format), labels, max_docs=max_docs,
                                        **{k: policies.get(k) for k in ("missing_run", "no_relevant", "ties", "unjudged",
                                                                         "upper_grade")})
            _output(result, fmt, per_query, digits, [], 1.0, label)
            return
        # the metrics are parsed once (names, rel_level applied); the remaining settings go to the engine
        parsed: list[Any] = list(labels)
        options: dict[str, Any] = {k: v for k, v in dict(max_docs=max_docs, num_docs=num_docs,
                                                         upper_grade=upper_grade).items() if v is not None}
        # Files too large for memory (or --max-memory) and Spark: the engine reads the files itself.
        large: Callable[[], Any] | None = None
        settings = {**policies, **options}
        if engine == "spark":
            large = partial(_on_spark, qrels, run, parsed, master, qrels_format, run_format, profile, settings)
        else:
            from ragrade.engine.budget import budget_for

            budget = budget_for(qrels, run, max_memory)
            if budget is not None:
                large = partial(_out_of_core, qrels, run, parsed, budget, qrels_format, run_format, profile,
                                settings)
        if large is not None:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RagradeWarning)
                result = large()
            finish(loop, result, qrels, run)
            _print(result, caught, fmt, per_query, digits, hole_threshold, label)
            return
        with reading_all([(qrels, "ground truth"), (run, "run")]) as (q_progress, r_progress):
            # Both files at once: Arrow parses without holding the GIL.
            q, r = read_both(qrels, run, qrels_format=qrels_format, qrels_progress=q_progress,
                             run_format=run_format, run_progress=r_progress)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RagradeWarning)
            result = evaluate(q, r, parsed, profile=profile, **options, **policies)
        finish(loop, result, q, r)
    _print(result, caught, fmt, per_query, digits, hole_threshold, label)


def _on_spark(qrels: str, run: str, metrics: list[Any], master: str, qrels_format: str | None,
              run_format: str | None, profile: str | None, policies: dict[str, Any]) -> Any:
    from ragrade import spark as rs

    rs._pyspark()  # the install hint, before anything else
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    session = active if active is not None else rs.session(master)
    try:
        if active is None:
            session.sparkContext.setLogLevel("ERROR")
        res = rs.evaluate(qrels, run, metrics, spark=session, profile=profile, qrels_format=qrels_format,
                          run_format=run_format, **policies)
        result = res.to_result()
        res.unpersist()
        return result
    finally:
        if active is None:
            session.stop()


def _out_of_core(qrels: str, run: str, metrics: list[Any], budget: int, qrels_format: str | None,
                 run_format: str | None, profile: str | None, policies: dict[str, Any]) -> Any:
    from ragrade.engine.api import evaluate
    from ragrade.engine.outofcore import evaluate_budgeted

    def part(q: Any, r: Any, lab: Any = metrics, settings: dict[str, Any] = policies) -> Any:
        return evaluate(q, r, lab, profile=profile, **settings)

    return evaluate_budgeted(qrels, run, metrics, part, budget, policies, qrels_format=qrels_format,
                             run_format=run_format)


def _print(result: Any, caught: list[Any], fmt: str, per_query: bool, digits: int, hole_threshold: float,
           label: str) -> None:
    from ragrade.errors import RagradeWarning

    # The engine's own warning repeats result.notes(), printed below as notes; anything else (readers,
    # profiles) is printed as a warning, in every format.
    own = set(result.notes())
    extra = [part for w in caught if issubclass(w.category, RagradeWarning)
             for part in str(w.message).split("; ") if part not in own]
    _output(result, fmt, per_query, digits, list(dict.fromkeys(extra)), hole_threshold, label)


def _output(result: Any, fmt: str, per_query: bool, digits: int, extra: list[str], hole_threshold: float,
            label: str) -> None:
    """The result in ``fmt`` on stdout, the run named ``label``; its notes (one wording in every format:
    :meth:`Result.notes`) and warnings on stderr."""
    result.run_name = label
    holes = result.hole_rate
    warned = list(extra)
    if holes is not None and holes.exceeds(hole_threshold):
        warned.append(f"{100 * holes.mean:.1f}% of the top-{holes.k} documents are unjudged (above "
                      f"{100 * hole_threshold:g}%): the values are lower bounds (try --unjudged bounds)")
    if fmt == "table":
        _print_table(result, per_query, digits, warned)
        return
    for note in result.notes():
        click.echo(f"note: {note}", err=True)
    for note in warned:
        click.echo(f"warning: {note}", err=True)
    if fmt == "json":
        click.echo(result.to_json(per_query=per_query))
    elif fmt == "csv":
        click.echo(result.to_csv(per_query=per_query, digits=digits), nl=False)
    else:
        click.echo(result.to_markdown(per_query=per_query, digits=digits), nl=False)


def _print_table(result: Any, per_query: bool, digits: int, warned: list[str]) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    out = stdout_console()
    title = Text(f"run {result.run_name}") if result.run_name else None
    table = Table(title=title, title_justify="left")
    upper = result.upper_means
    table.add_column("metric")
    table.add_column("mean" if upper is None else "lower", justify="right")
    if upper is not None:
        table.add_column("upper", justify="right")
    table.add_column("queries", justify="right")
    counts = result.counts
    for label, mean in result.means.items():
        bound = [number(upper[label], digits)] if upper is not None else []
        table.add_row(Text(label), number(mean, digits), *bound, str(counts[label]))
    out.print(table)
    if per_query:
        pq = Table(title="per query", title_justify="left")
        pq.add_column("query")
        for c in result.columns:
            pq.add_column(Text(c), justify="right")
        for q, row in result.per_query_rows():
            pq.add_row(Text(str(q)), *(number(float(v), digits) for v in row))
        out.print(pq)
    lines = result.summary_lines()
    err = stderr_console()
    for i, line in enumerate(lines):
        if i == 0 or line.startswith("hole rate@"):
            out.print(Text(line, style="dim"))
        else:
            err.print(f"[yellow]note:[/yellow] {escape(line)}")
    for note in warned:
        err.print(f"[yellow]warning:[/yellow] {escape(note)}")
