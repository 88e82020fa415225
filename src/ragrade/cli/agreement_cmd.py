"""``ragrade agreement``: how far an assessor's qrels agree with reference (human) qrels, on labels and,
given runs, on system rankings; optionally prediction-powered means with confidence intervals."""

from __future__ import annotations

import json
import math
from typing import Any

import click

from ragrade.cli._output import input_errors
from ragrade.cli._truth_options import truth_keywords, truth_options


@click.command(
    "agreement",
    epilog=(
        "Labels are compared on the (query, doc) pairs both files judge. kappa: Cohen's kappa on relevant "
        "(grade >= --rel) vs not; weighted kappa: quadratic weights on the grade values. Systems: each run's "
        "mean under both qrels; Kendall's tau-b, tau_AP (reference as truth) and Spearman's rho between the "
        "two rankings. --ppi treats the reference's queries as a random labelled sample and gives each run's "
        "prediction-powered mean and 95% interval. See docs/assessment.md."
    ),
)
@click.argument("reference", type=click.Path(exists=True, dir_okay=False))
@click.argument("candidate", type=click.Path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--metric", "-m", "metrics", multiple=True, help="Metric for the system comparison (repeatable; "
              "default ndcg@10).")
@click.option("--rel", type=float, default=1.0, show_default=True, help="Lowest grade that counts as relevant.")
@click.option("--ppi", is_flag=True, help="Prediction-powered mean and CI per run and metric (needs runs).")
@click.option("--alpha", type=click.FloatRange(min=0.0, max=1.0, min_open=True, max_open=True), default=0.05,
              show_default=True, help="1 - confidence level of the --ppi and bootstrap intervals.")
@click.option("--reference-prefer", type=click.Choice(["human", "llm", "error"]), default=None,
              help="For a merged qrels file as reference: which origin wins a pair judged by both.")
@click.option("--candidate-prefer", type=click.Choice(["human", "llm", "error"]), default=None,
              help="For a merged qrels file as candidate: which origin wins (e.g. llm).")
@click.option("--top-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="kendall@k: Kendall's tau over the reference's top k runs.")
@click.option("--resamples", "n_resamples", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Bootstrap resamples (over queries) of the confidence intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--candidate-run", "candidate_runs", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Two test sets: a run of the same system over CANDIDATE's own queries (repeatable, in the order "
                   "of RUNS, which are over REFERENCE's). Reports how alike the two sets rank the systems (tau with "
                   "its interval, tau_AP, top-k agreement); CANDIDATE may be span truth (--chunks, --corpus). See "
                   "docs/synthesize.md.")
@truth_options
def command(reference: str, candidate: str, runs: tuple[str, ...], metrics: tuple[str, ...], rel: float, ppi: bool,
            alpha: float, reference_prefer: str | None, candidate_prefer: str | None, top_k: int, n_resamples: int,
            seed: int, fmt: str, candidate_runs: tuple[str, ...] = (), **truth: Any) -> None:
    """Agreement of CANDIDATE qrels (an assessor's) with REFERENCE qrels (human), and of the system rankings
    the two give to RUNS."""
    given = truth_keywords(truth)
    if candidate_runs:
        with input_errors():
            from ragrade.cli._set_agreement import run as two_sets

            two_sets(reference, candidate, runs, candidate_runs,
                     [p.strip() for m in metrics for p in m.split(",") if p.strip()] or ["ndcg@10"], top_k=top_k,
                     n_resamples=n_resamples, seed=seed, alpha=alpha, fmt=fmt, truth=given)
        return
    if given:
        raise click.UsageError(f"--{next(iter(given)).replace('_', '-')} is for two test sets (--candidate-run)")
    if ppi and not runs:
        raise click.UsageError("--ppi needs runs")
    with input_errors():
        from ragrade.assessment.calibration import agreement
        from ragrade.io import read_qrels, read_run

        ref = read_qrels(reference, prefer=reference_prefer)
        cand = read_qrels(candidate, prefer=candidate_prefer)
        from ragrade.cli._output import run_names

        # runs are named by their file names, as in every command (a TREC tag is often shared)
        run_map: dict[str, Any] = {name: read_run(path) for name, path in zip(run_names(runs, []), runs, strict=True)}
        mlist = [p.strip() for m in metrics for p in m.split(",") if p.strip()] or ["ndcg@10"]
        result = agreement(ref, cand, run_map or None, mlist, rel=rel, ppi=ppi, alpha=alpha, top_k=top_k,
                           n_resamples=n_resamples, seed=seed)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(to_markdown(result))
    else:
        _print_table(result)


def _f(v: Any, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def _label_rows(a: Any) -> list[tuple[str, str]]:
    u = a.union or 1
    return [
        ("pairs judged by both", str(a.pairs)),
        (f"Cohen's kappa (relevant = grade >= {a.rel:g})", _f(a.kappa)),
        ("weighted kappa (quadratic)", _f(a.weighted_kappa)),
        *_alpha_rows(a),
        ("candidate precision (relevant)", _f(a.precision)),
        ("candidate recall (relevant)", _f(a.recall)),
        ("judged by the reference only", f"{a.reference_only} ({a.reference_only / u:.1%} of all pairs)"),
        ("judged by the candidate only", f"{a.candidate_only} ({a.candidate_only / u:.1%} of all pairs)"),
    ]


def _ci(v: Any) -> str:
    return "" if not v or v[0] is None else f" [{_f(v[0])}, {_f(v[1])}]"


def _alpha_rows(a: Any) -> list[tuple[str, str]]:
    alpha, ci = a.extra.get("krippendorff_alpha", {}), a.extra.get("krippendorff_alpha_ci", {})
    return [(f"Krippendorff's alpha ({lv})", _f(alpha[lv]) + _ci(ci.get(lv))) for lv in alpha]


def _system_line(s: Any) -> str:
    """The rank correlations of one metric, each with its bootstrap interval."""
    e = s.extra
    parts = [("Kendall tau-b", s.kendall_tau, "kendall_tau"), ("tau_AP", s.tau_ap, "tau_ap"),
             ("Spearman", s.spearman, "spearman"), ("Pearson", e.get("pearson"), "pearson"),
             ("tau_AP,b", e.get("tau_ap_b"), "tau_ap_b"), ("tau_GAP", e.get("tau_gap"), "tau_gap"),
             (f"kendall@{e.get('kendall_at_k_k', '')}", e.get("kendall_at_k"), "kendall_at_k")]
    return " · ".join(f"{label} {_f(v)}{_ci(e.get(key + '_ci'))}" for label, v, key in parts)


def _print_table(a: Any) -> None:
    from rich import box
    from rich.table import Table

    from ragrade.cli._output import stdout_console

    console = stdout_console()
    t = Table(title="ragrade agreement · labels", box=box.SIMPLE_HEAD, show_header=False)
    t.add_column("what", no_wrap=True)
    t.add_column("value", justify="right")
    for k, v in _label_rows(a):
        t.add_row(k, v)
    console.print(t)
    c = Table(title="confusion (rows: reference grade, columns: candidate grade)", box=box.SIMPLE_HEAD)
    c.add_column("ref \\ cand", justify="right")
    for g in a.grades:
        c.add_column(str(g), justify="right")
    for g, row in zip(a.grades, a.confusion.tolist(), strict=True):
        c.add_row(str(g), *(str(x) for x in row))
    console.print(c)
    for metric, s in a.systems.items():
        d = s.to_dict()
        st = Table(title=f"systems · {metric}", box=box.SIMPLE_HEAD)
        for col in ("run", "reference", "candidate", "rank ref", "rank cand"):
            st.add_column(col, justify="left" if col == "run" else "right")
        ranks = s.ranks()
        for run, (x, y) in s.means.items():
            st.add_row(run, _f(x), _f(y), str(ranks[run][0]), str(ranks[run][1]))
        console.print(st)
        ch = d["largest_rank_change"]
        moved = (f"{ch['run']} ({ch['reference_rank']} -> {ch['candidate_rank']})" if ch["change"] else "none")
        console.print(f"  {_system_line(s)}", soft_wrap=True)
        console.print(f"  same top system: {'yes' if s.same_top else 'no'} · largest rank change: {moved}\n")
    for metric, runs in a.ppi.items():
        pt = Table(title=f"prediction-powered inference · {metric}", box=box.SIMPLE_HEAD,
                   caption="ppi: candidate mean corrected on the labelled queries; naive: candidate labels only; "
                           "human: reference labels only")
        for col in ("run", "ppi", "ppi CI", "naive", "naive CI", "human", "human CI", "n labelled", "n unlabelled"):
            pt.add_column(col, justify="left" if col == "run" else "right")
        for run, d in runs.items():
            p, n, h = d["ppi"], d["naive"], d["human"]
            pt.add_row(run, _f(p.estimate), f"[{_f(p.low)}, {_f(p.high)}]", _f(n.estimate), f"[{_f(n.low)}, {_f(n.high)}]",
                       _f(h.estimate), f"[{_f(h.low)}, {_f(h.high)}]", str(p.n_labeled), str(p.n_unlabeled))
        console.print(pt)


def to_markdown(a: Any) -> str:
    lines = ["| label agreement | value |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in _label_rows(a)]
    lines += ["", "| reference \\ candidate | " + " | ".join(str(g) for g in a.grades) + " |",
              "|---:|" + "---:|" * len(a.grades)]
    for g, row in zip(a.grades, a.confusion.tolist(), strict=True):
        lines.append(f"| {g} | " + " | ".join(str(x) for x in row) + " |")
    for metric, s in a.systems.items():
        ranks = s.ranks()
        lines += ["", f"**{metric}**: {_system_line(s)}, same top system: {'yes' if s.same_top else 'no'}", "",
                  "| run | reference | candidate | rank ref | rank cand |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {r} | {_f(x)} | {_f(y)} | {ranks[r][0]} | {ranks[r][1]} |" for r, (x, y) in s.means.items()]
    for metric, runs in a.ppi.items():
        lines += ["", f"**{metric}**, prediction-powered inference:", "",
                  "| run | ppi | ppi CI | naive | naive CI | human | human CI |", "|---|---:|---:|---:|---:|---:|---:|"]
        for run, d in runs.items():
            p, n, h = d["ppi"], d["naive"], d["human"]
            lines.append(f"| {run} | {_f(p.estimate)} | [{_f(p.low)}, {_f(p.high)}] | {_f(n.estimate)} | "
                         f"[{_f(n.low)}, {_f(n.high)}] | {_f(h.estimate)} | [{_f(h.low)}, {_f(h.high)}] |")
    return "\n".join(lines)
