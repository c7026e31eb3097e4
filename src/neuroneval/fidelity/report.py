"""Assemble the fidelity report from the build's result files and render it as Markdown.

``results/fidelity.csv`` has the columns of :data:`neuroneval.fidelity.claims.COLUMNS`; ``results/fidelity.md``
is rendered from it (never edited by hand): the verdict rules, a count of verdicts, then one table per paper whose
rows say where the paper's value comes from (printed table, paper text, authors' code output).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from neuroneval.fidelity import claims as claim_builders
from neuroneval.fidelity.claims import COLUMNS, claims_frame
from neuroneval.fidelity.claims.paired import PairedBootstrapOptions

PAPER_TITLES = {
    "000": "Evaluating neuron explanations: a unified framework with sanity checks (NeuronEval)",
    "001": "Crowd-sourced evaluation of neuron explanations",
    "002": "CoSy: evaluating textual explanations of neurons",
    "004": "Evaluating readability and faithfulness of concept-based explanations",
}


@dataclass(frozen=True)
class FidelityInputs:
    """Paths of the result files the report reads (all written by the workflow) and the settings' paper numbers."""

    table4: Path
    meta: Path
    ceiling: Path
    worlds: Path
    table3: Path
    experimental: Path
    ties: Path
    theoretical_average: Path
    reference_check: Path
    analytical: Path
    shift: Path
    crowd_rarity: Path
    crowd_summary: Path
    crowd_units: Path
    crowd_concepts: Path
    cosy_table2: Path
    cosy_natural: Path
    concepteval_reliability: Path
    concepteval_validity: Path
    concepteval_mtmm: Path
    concepteval_methods: Path
    explain_agreement: Path
    explain_cosy: Path
    table4_settings: Path
    explain_scores: tuple[Path, ...] = ()
    explain_crowd: tuple[Path, ...] = ()
    paper_settings: Mapping[str, int] = field(default_factory=dict)
    class_rarity: float = 0.001
    explain_protocols: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    explain_bootstrap: Mapping[str, Any] = field(default_factory=dict)


#: Fields of :class:`FidelityInputs` that are lists of files (one per explained setting), not one path.
FILE_LISTS = ("explain_scores", "explain_crowd")
#: Fields of :class:`FidelityInputs` that are params of the workflow, not files.
PARAMS = ("paper_settings", "class_rarity", "explain_protocols", "explain_bootstrap")


def _read(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    frame = pd.read_csv(path)
    missing = [column for column in required if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing} needed by the fidelity report")
    return frame


def _read_optional(path: Path) -> pd.DataFrame:
    """A table that may be empty (a header-less file when its block scores nothing)."""
    return pd.read_csv(path) if Path(path).stat().st_size > 1 else pd.DataFrame()


def _natural_table(path: Path) -> pd.DataFrame:
    """``results/cosy/natural.csv``, which may be empty (no vision-world setting); its columns checked otherwise."""
    frame = _read_optional(path)
    return frame if frame.empty else _read(path, ("setting", "generator", "auc_natural", "auc_synthetic",
                                                  "mad_natural", "mad_synthetic"))


def embedded_crowd_rarity(units_path: Path, concepts_path: Path) -> float:
    """Median frequency, over the crowd study's units, of the concept that explains each unit (Eq. 9)."""
    from neuroneval.io import read_concept_table

    units = _read(units_path, ("unit", "concept"))
    concepts, _ = read_concept_table(concepts_path)
    names = pd.unique(units.drop_duplicates("unit")["concept"].astype(str))
    absent = [name for name in names if name not in concepts.columns]
    if absent:
        raise ValueError(f"{units_path}: concept(s) {absent[:3]} are not columns of {concepts_path}")
    frequency = concepts[list(names)].astype(float).mean()
    per_unit = units.drop_duplicates("unit")["concept"].astype(str).map(frequency)
    return float(per_unit.median())


def _read_units(paths: tuple[Path, ...], required: tuple[str, ...]) -> pd.DataFrame:
    """Per-unit tables of several settings stacked (empty files, from blocks that score nothing, skipped)."""
    frames = [_read(path, required) for path in paths if Path(path).stat().st_size > 1]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(required))


def _sources(paths: tuple[Path, ...], pattern: str) -> str:
    """The files a claim read, comma-separated as the report cites them (``pattern`` when there are none)."""
    return ", ".join(str(path) for path in paths) or pattern


def theoretical_cells(inputs: FidelityInputs) -> pd.DataFrame:
    """Every cell of Tables C.1–C.4: our reference-mode runs (``inputs.reference_check``) beside the printed value
    and the authors' notebook output (:func:`neuroneval.fidelity.claims.reference_cells`)."""
    runs = _read(inputs.reference_check, ("metric", "test", "gamma", "seed", "mean_delta", "delta_se"))
    return claim_builders.reference_cells(runs)


def fidelity_table(inputs: FidelityInputs, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every claim the embedded default can test, in the order papers 000, 001, 002, 004 (columns :data:`COLUMNS`).

    ``cells`` is :func:`theoretical_cells` when the caller already has it.
    """
    meta = _read(inputs.meta, ("setting", "metric", "test_auprc"))
    table3 = _read(inputs.table3, ("metric", "pass"))
    cells = theoretical_cells(inputs) if cells is None else cells
    explain_scores = _read_units(inputs.explain_scores, ("setting", "group", "table", "method", "unit",
                                                         "simulation_correlation"))
    explain_crowd = _read_units(inputs.explain_crowd, ("setting", "aggregation", "method", "unit",
                                                       "crowd_correlation"))
    bootstrap = PairedBootstrapOptions.from_params(inputs.explain_bootstrap)
    rows = [
        *claim_builders.setting_claims(
            meta,
            _read(inputs.ceiling, ("setting", "meta_auprc")),
            _read(inputs.worlds, ("setting",)),
            inputs.paper_settings,
            discrimination=_read(inputs.table4_settings, ("setting", "discriminates", "reason")),
        ),
        *claim_builders.table4_claims(_read(inputs.table4, ("metric", "mean_rank", "mean_auprc")), meta, table3),
        *claim_builders.table3_claims(
            table3,
            _read(inputs.experimental, ("setting", "metric", "test", "decrease_acc")),
            _read(inputs.ties, ("source", "case", "metric", "test", "ties", "decrease_acc")),
        ),
        *claim_builders.reference_mode_claims(cells, source=str(inputs.reference_check)),
        *claim_builders.closed_form_claims(
            _read(inputs.analytical, ("metric", "test", "gamma", "expected_delta")),
            _read(inputs.theoretical_average, ("metric", "test", "gamma", "ties", "mean_delta", "delta_se")),
            source=f"{inputs.analytical}, {inputs.theoretical_average}",
        ),
        *claim_builders.shift_claims(_read(inputs.shift, ("metric", "original_auprc", "shifted_auprc", "delta_auprc"))),
        *claim_builders.crowd_claims(
            _read(inputs.crowd_rarity, ("rarity", "baseline", "method", "factor")),
            _read(inputs.crowd_summary, ("baseline", "method", "unit_group", "factor")),
            embedded_crowd_rarity(inputs.crowd_units, inputs.crowd_concepts),
            class_rarity=inputs.class_rarity,
        ),
        *claim_builders.le_best_claims(explain_scores, inputs.explain_protocols, options=bootstrap,
                                       source=_sources(inputs.explain_scores, "results/explain/scores/<setting>.csv")),
        *claim_builders.broden_claims(explain_scores, inputs.explain_protocols, options=bootstrap,
                                      source=_sources(inputs.explain_scores, "results/explain/scores/<setting>.csv")),
        *claim_builders.crowd_le_claims(explain_crowd, options=bootstrap,
                                        source=_sources(inputs.explain_crowd, "results/explain/crowd/<setting>.csv")),
        *claim_builders.crowd_agreement_claims(
            _read(inputs.explain_agreement, ("table", "setting", "reference", "metric", "tau", "ci_low", "ci_high"))
        ),
        *claim_builders.cosy_claims(
            _read(inputs.cosy_table2, ("setting", "generator", "method", "auc_mean")),
            _natural_table(inputs.cosy_natural),
            source=f"{inputs.cosy_table2}, {inputs.cosy_natural}",
        ),
        *claim_builders.concepteval_claims(
            _read(inputs.concepteval_reliability, ("model", "measure", "statistic", "run", "value")),
            _read(inputs.concepteval_validity, ("model", "criterion", "measure", "statistic", "value")),
            _read(inputs.concepteval_mtmm, ("model", "measure_a", "measure_b", "statistic", "value")),
            _read(inputs.concepteval_methods, ("model", "family", "measure", "mean")),
        ),
        *claim_builders.cosy_benchmark_claims(_read_optional(inputs.explain_cosy)),
    ]
    return claims_frame(rows)


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _number(value: object, digits: int = 4) -> str:
    return f"{float(value):.{digits}f}" if pd.notna(value) else "—"


def _ours(row: object, value: str, low: str, high: str) -> str:
    """Our first seed's value, with the range over seeds where there are several."""
    text = _number(getattr(row, value))
    if int(getattr(row, "seeds", 1)) > 1:
        text += f" [{_number(getattr(row, low))}, {_number(getattr(row, high))}]"
    return text


def cell_markdown(cells: pd.DataFrame) -> list[str]:
    """The per-cell section of ``results/fidelity.md``: Tables C.1–C.4, ours beside the printed and notebook values.

    ``cells`` is :func:`theoretical_cells`; the last column says why the printed and notebook values differ
    (:data:`neuroneval.sanity.printed_reference.DIFFERENCE_LABELS`, docs/fidelity.md).
    """
    from neuroneval.sanity.printed_reference import DIFFERENCE_LABELS

    seeds = int(cells["seeds"].max()) if len(cells) else 0
    n = int(cells["n"].iloc[0]) if len(cells) else 0
    lines = [
        "",
        "## Tables C.1–C.4 cell by cell (paper 000, reference mode)",
        "",
        f"Ours: the first seed's value [range over {seeds} seed{'s' if seeds != 1 else ''}] at n = {n:,}; printed: the "
        "paper's table (C.1/C.2 Decrease Acc, C.3/C.4 mean Δs); notebook: the authors' saved notebook output "
        "(the reference where nothing is printed: the combinations of App. E.6).",
        "",
        "| test | metric | γ | Δs ours | Δs printed | Δs notebook | Decrease Acc ours | printed | notebook | "
        "printed vs notebook |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    printed = cells.get("ref_source", pd.Series("printed table", index=cells.index)) == "printed table"
    for row, is_printed in zip(cells.itertuples(index=False), printed, strict=True):
        label = str(getattr(row, "printed_vs_notebook", "") or "")
        lines.append("| " + " | ".join(_cell(value) for value in (
            row.test, row.metric, f"{row.gamma:g}",
            _ours(row, "mean_delta", "delta_min", "delta_max"),
            _number(row.ref_mean_delta) if is_printed else "—",
            _number(getattr(row, "notebook_mean_delta", row.ref_mean_delta)),
            _ours(row, "decrease_acc", "accuracy_min", "accuracy_max"),
            _number(row.ref_decrease_acc, 3) if is_printed else "—",
            _number(getattr(row, "notebook_decrease_acc", row.ref_decrease_acc), 3),
            DIFFERENCE_LABELS.get(label, "not printed"),
        )) + " |")
    return lines


def render_markdown(table: pd.DataFrame, cells: pd.DataFrame | None = None) -> str:
    """``results/fidelity.md``: verdict rules and counts, then one Markdown table per paper, then (with ``cells``,
    :func:`theoretical_cells`) every cell of Tables C.1–C.4 beside the printed and notebook values."""
    missing = [column for column in COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"fidelity table lacks column(s) {missing}")
    table = table.astype(object).where(table.notna(), "")  # an empty reason read back from CSV is NaN
    counts = table["verdict"].value_counts()
    lines = [
        "# Fidelity report: the papers' claims beside this build",
        "",
        "Generated by `snakemake fidelity` from the result files named in each row's source; do not edit.",
        "",
        "Verdict rules:",
        "",
        *(f"- {rule}" for rule in claim_builders.VERDICT_RULES),
        "",
        f"**{int(counts.get('holds', 0))} hold, {int(counts.get('within_noise', 0))} within noise, "
        f"{int(counts.get('differs', 0))} differ, {int(counts.get('not_testable', 0))} not testable** of "
        f"{len(table)} claims.",
    ]
    for code, rows in table.groupby("paper", sort=False):
        lines += [
            "",
            f"## Paper {code}: {PAPER_TITLES.get(str(code), '')}",
            "",
            "| table | claim | paper | paper's source | ours | verdict | measured reason | source |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rows.itertuples(index=False):
            lines.append(
                "| "
                + " | ".join(
                    _cell(value)
                    for value in (
                        row.table,
                        row.claim,
                        row.paper_value,
                        row.paper_source,
                        row.our_value,
                        f"**{str(row.verdict).replace('_', ' ')}**",
                        row.reason or "—",
                        row.source,
                    )
                )
                + " |"
            )
    if cells is not None:
        lines += cell_markdown(cells)
    return "\n".join(lines) + "\n"
