"""The metric list of the scale tests: every id family of the registry (so a family added later is covered
without editing these tests), at its cutoffs, with a few parameterised variants."""

from __future__ import annotations

from ragrade.metrics import ID_FAMILIES


def registry_metrics() -> list[str]:
    out: list[str] = []
    for d in ID_FAMILIES:
        if d.at_param is not None:  # iprec@0.5: the @ sets the recall level
            out += [d.example(), f"{d.name}@0.0", f"{d.name}@1.0"]
        elif d.cutoff == "none":
            out.append(d.name)
        else:
            out += [f"{d.name}@{k}" for k in (1, 3, 10)]
            if d.cutoff == "optional":
                out.append(d.name)
    names = {d.name for d in ID_FAMILIES}
    # Parameters that change what a value depends on: binary relevance, exponential gain, the scale of the
    # C/W/L measures (unset max_rel is the top grade of the whole ground truth), the collection size.
    extra = ["precision(rel=2)@5", "ndcg(gain=exp)@5", "ndcg(rel=2)@5", "ap(judged_only=true)"]
    if "rbp_cwl" in names:
        extra += ["rbp_cwl(max_rel=2)", "nerr8(max_rel=3)@5"]
    return out + [m for m in extra if m.split("(")[0] in names]


METRICS = registry_metrics()
