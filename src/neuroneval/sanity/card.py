"""The sanity card of one metric — yours — beside the built-in metrics (paper 000's test for any metric).

A metric takes the same three measurements as Table 3 and Table 4's rows, on the same inputs, seeds and units:

* the experimental Missing/Extra Labels tests on each sanity setting's test units (000 Sec. 4.3, Eq. 9–12), with
  α/λ chosen on the validation units as the workflow chooses them (Table 4's choice for settings with known
  units, the truth α alone for IoU-truth settings, App. F.1): :func:`~neuroneval.sanity.experimental_table.
  experimental_table`;
* the theoretical tests on ideal binary units (App. C): :func:`~neuroneval.sanity.theoretical.theoretical_test`;
* meta-AUPRC (Eq. 13) on each meta setting's test units with its bootstrap interval:
  :func:`~neuroneval.meta.evaluate_setting`.

The verdict is Table 3's rule (:func:`~neuroneval.sanity.tables.table3`): a test passes when Decrease Acc exceeds
``pass_threshold`` (90 %) in the experimental column (mean over settings) and in the theoretical column (mean
over γ); the metric passes when it passes both tests. Meta-AUPRC is ranked among the built-in metrics' values of
the same setting (competition ranks, 1 = best, as in Tables F.5–F.7).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from neuroneval.meta import MetaOptions, evaluate_metric, evaluate_setting, truth_mask, validation_split
from neuroneval.metrics import MetricOptions
from neuroneval.sanity.experimental_table import experimental_table
from neuroneval.sanity.options import SanityOptions
from neuroneval.sanity.perturb import TESTS
from neuroneval.sanity.tables import competition_ranks, per_setting_table, table3
from neuroneval.sanity.theoretical import theoretical_test
from neuroneval.sanity.units import SanityUnits
from neuroneval.settings import SettingData


@dataclass(frozen=True)
class CardSetting:
    """One setting the card scores on: its data and truth (``unit, concept`` rows), whether it is a sanity
    setting (experimental test) and a meta setting (meta-AUPRC), and the α values its sanity α/λ search takes
    when Table 4's choice is not reused (``iou_alpha``: the truth α of an IoU-truth setting, else ``None``)."""

    name: str
    data: SettingData
    truth: pd.DataFrame
    sanity: bool = True
    meta: bool = True
    iou_alpha: float | None = None


@dataclass(frozen=True)
class CardScores:
    """A metric's own results, tidy like the workflow's files, and the seconds each part took."""

    experimental: pd.DataFrame  # rows of results/sanity/experimental/<setting>.csv
    theoretical: pd.DataFrame  # rows of results/sanity/theoretical/<ties>.csv
    meta: pd.DataFrame  # rows of results/meta/<setting>.csv
    seconds: Mapping[str, float] = field(default_factory=dict)


def _units(setting: CardSetting, meta: MetaOptions) -> SanityUnits:
    """The setting's units split as meta and the sanity steps split them (:func:`validation_split`)."""
    data = setting.data
    truth = truth_mask(setting.truth, data.unit_names, data.concept_names)
    val_units, test_units = validation_split(truth, meta)
    return SanityUnits(data.activations, data.concepts, data.concept_names, truth, val_units, test_units)


def _hyperparameters(metric: str, setting: CardSetting, units: SanityUnits, meta: MetaOptions,
                     meta_rows: pd.DataFrame) -> pd.DataFrame:
    """α/λ of the sanity tests: Table 4's choice (``meta_rows``) for settings with known units, else searched on
    the validation units at the truth α alone (the workflow's ``sanity_hyperparameters``)."""
    if setting.iou_alpha is None:
        chosen = meta_rows[meta_rows["setting"] == setting.name]
        return chosen.set_index("metric")[["alpha", "lam"]]
    result = evaluate_metric(metric, units.activations, units.concepts, units.truth, val_units=units.val_units,
                             test_units=units.test_units, alpha_grid=[setting.iou_alpha], lam_grid=meta.lam_grid,
                             options=MetricOptions(ties=meta.ties, seed=meta.seed))
    return pd.DataFrame({"alpha": [result.params.get("alpha", np.nan)], "lam": [result.params.get("lam", np.nan)]},
                        index=pd.Index([metric], name="metric"))


def score_for_card(metric: str, settings: Sequence[CardSetting], *, meta: MetaOptions, sanity: SanityOptions,
                   workers: int = 1) -> CardScores:
    """Everything the card needs about ``metric``, computed as the workflow computes the built-ins' tables.

    Meta-AUPRC is evaluated on the meta settings and on the sanity settings whose α/λ reuse Table 4's choice
    (known units); the experimental tests on the sanity settings; the theoretical tests once, in ``sanity.ties``
    (``workers`` processes; the result does not depend on their number).
    """
    seconds = {"meta": 0.0, "experimental": 0.0, "theoretical": 0.0}
    meta_frames, experimental_frames = [], []
    for setting in settings:
        start = time.perf_counter()
        needs_meta = setting.meta or (setting.sanity and setting.iou_alpha is None)
        rows = (evaluate_setting(setting.data, setting.truth, meta, setting=setting.name, metrics=[metric],
                                 progress=False) if needs_meta else pd.DataFrame(columns=["setting", "metric"]))
        if setting.meta:
            meta_frames.append(rows)
        seconds["meta"] += time.perf_counter() - start
        if setting.sanity:
            start = time.perf_counter()
            units = _units(setting, meta)
            chosen = _hyperparameters(metric, setting, units, meta, rows)
            experimental_frames.append(experimental_table(units, [metric], chosen, sanity, setting=setting.name,
                                                          feature_cache_gib=meta.feature_cache_gib))
            seconds["experimental"] += time.perf_counter() - start
    start = time.perf_counter()
    theory = sanity.theoretical
    theoretical = theoretical_test([metric], gammas=list(theory.gammas), n=theory.n, draws=theory.draws,
                                   ties=sanity.ties, epsilon=sanity.epsilon, seed=sanity.seed, lam=theory.lam,
                                   device=theory.device, workers=workers, progress=False)
    seconds["theoretical"] = time.perf_counter() - start
    return CardScores(_concat(experimental_frames), theoretical.drop(columns="seconds"), _concat(meta_frames),
                      seconds)


def _concat(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(list(frames), ignore_index=True) if frames else pd.DataFrame()


@dataclass(frozen=True)
class SanityCard:
    """The card of one metric: Table 3's columns and verdicts (``verdicts``, the metric's row first, then the
    built-ins'), Decrease Acc per setting and test (``per_setting``, Tables F.1–F.4's columns), meta-AUPRC per
    setting with its interval and rank among the built-ins (``meta``), and how long the metric took."""

    metric: str
    verdicts: pd.DataFrame
    per_setting: pd.DataFrame
    meta: pd.DataFrame
    seconds: Mapping[str, float]

    @property
    def passed(self) -> bool:
        """Whether the metric passes the sanity check (both tests, Table 3's rule)."""
        return bool(self.verdicts.set_index("metric").loc[self.metric, "pass"])


def meta_ranks(metric: str, own: pd.DataFrame, builtin: pd.DataFrame) -> pd.DataFrame:
    """Per setting of ``own`` (the metric's meta rows): test meta-AUPRC, interval, α/λ, and its competition rank
    among the built-in rows of that setting (``builtin``, rows of ``results/meta/<setting>.csv``; the metric's
    own name excluded), with the best built-in metric and its meta-AUPRC. Values equal to 6 decimals (the precision
    of the built tables) share a rank."""
    rows = []
    for record in own.to_dict("records"):
        others = builtin[(builtin["setting"] == record["setting"]) & (builtin["metric"] != metric)]
        # to the 6 decimals the built tables keep, so that a metric equal to a built-in one ties with it
        values = pd.concat([pd.Series({metric: record["test_auprc"]}),
                            others.set_index("metric")["test_auprc"]]).astype(float).round(6)
        best = others.loc[others["test_auprc"].idxmax()] if len(others) else None
        rows.append({"setting": record["setting"], "metric": metric, "test_auprc": record["test_auprc"],
                     "ci_low": record["ci_low"], "ci_high": record["ci_high"], "alpha": record["alpha"],
                     "lam": record["lam"], "rank": int(competition_ranks(values)[metric]) if len(others) else pd.NA,
                     "of": len(values) if len(others) else pd.NA,
                     "best_builtin": best["metric"] if best is not None else "",
                     "best_builtin_auprc": best["test_auprc"] if best is not None else np.nan,
                     "chance_auprc": record["chance_auprc"]})
    return pd.DataFrame(rows)


def sanity_card(metric: str, scores: CardScores, *, builtin_experimental: pd.DataFrame,
                builtin_theoretical: pd.DataFrame, builtin_meta: pd.DataFrame, builtin_metrics: Sequence[str],
                sanity: SanityOptions, settings: Sequence[str]) -> SanityCard:
    """Assemble the card from the metric's :class:`CardScores` and the built-ins' tidy tables (any of them may
    be empty where the workflow has not built them); ``settings`` are the sanity settings averaged into the
    experimental column (those the metric was scored on)."""
    builtin_metrics = [name for name in builtin_metrics if name != metric]
    names = [metric, *builtin_metrics]
    experimental = _concat([scores.experimental, _rows(builtin_experimental, builtin_metrics, settings)])
    theoretical = _concat([scores.theoretical, _rows(builtin_theoretical, builtin_metrics, None)])
    verdicts = table3(experimental, theoretical, metrics=names, settings=settings, ties=sanity.ties,
                      threshold=sanity.pass_threshold)
    measured = verdicts[[f"{column}_{test}" for column in ("experimental", "theoretical") for test in TESTS]]
    verdicts = verdicts[verdicts["metric"].eq(metric) | measured.notna().any(axis=1)]  # built-ins not built: dropped
    per_setting = per_setting_table(experimental, metrics=names, settings=settings, ties=sanity.ties)
    per_setting = per_setting[per_setting["metric"].isin(verdicts["metric"])]
    builtin_meta = builtin_meta if len(builtin_meta) else pd.DataFrame(columns=["setting", "metric", "test_auprc"])
    meta = meta_ranks(metric, scores.meta, builtin_meta[builtin_meta["metric"].isin(builtin_metrics)])
    return SanityCard(metric, verdicts.reset_index(drop=True), per_setting.reset_index(drop=True), meta,
                      dict(scores.seconds))


def _rows(tidy: pd.DataFrame, metrics: Sequence[str], settings: Sequence[str] | None) -> pd.DataFrame:
    if not len(tidy):
        return tidy
    chosen = tidy[tidy["metric"].isin(list(metrics))]
    return chosen if settings is None else chosen[chosen["setting"].isin(list(settings))]


def _percent(value: object) -> str:
    return "—" if value is None or pd.isna(value) else f"{100 * float(value):.1f}"


def card_text(card: SanityCard) -> str:
    """The card as Markdown: verdict, Table 3's row beside the built-ins', Decrease Acc per setting, meta-AUPRC
    per setting with its interval and rank, and the time the metric took."""
    row = card.verdicts.set_index("metric").loc[card.metric]
    lines = [f"# Sanity card: {card.metric}", "",
             f"**{'PASSES' if card.passed else 'FAILS'}** the sanity check (000 Sec. 4.4: Decrease Acc above the "
             f"threshold in the experimental and the theoretical column of both tests): missing labels "
             f"{'pass' if row['pass_missing'] else 'fail'}, extra labels {'pass' if row['pass_extra'] else 'fail'}.",
             "", "## Decrease Acc (%), Table 3", "",
             "| metric | exp. missing | theo. missing | exp. extra | theo. extra | pass |",
             "| --- | --- | --- | --- | --- | --- |"]
    for record in card.verdicts.to_dict("records"):
        name = f"**{record['metric']}**" if record["metric"] == card.metric else record["metric"]
        lines.append(f"| {name} | {_percent(record['experimental_missing'])} | "
                     f"{_percent(record['theoretical_missing'])} | {_percent(record['experimental_extra'])} | "
                     f"{_percent(record['theoretical_extra'])} | {'yes' if record['pass'] else 'no'} |")
    own = card.per_setting[card.per_setting["metric"] == card.metric]
    columns = [column for column in card.per_setting.columns if column not in ("metric", "ties")]
    if columns:
        lines += ["", "## Decrease Acc (%) per setting, Tables F.1–F.4", "", "| setting | missing | extra |",
                  "| --- | --- | --- |"]
        for setting in dict.fromkeys(column.rsplit("_", 1)[0] for column in columns):
            lines.append(f"| {setting} | {_percent(own[f'{setting}_missing'].iloc[0])} | "
                         f"{_percent(own[f'{setting}_extra'].iloc[0])} |")
    if len(card.meta):
        lines += ["", "## Meta-AUPRC (%), Table 4", "",
                  "| setting | meta-AUPRC | interval | rank among built-ins | best built-in | chance |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for record in card.meta.to_dict("records"):
            rank = "—" if pd.isna(record["rank"]) else f"{record['rank']} of {record['of']}"
            best = (f"{record['best_builtin']} {_percent(record['best_builtin_auprc'])}" if record["best_builtin"]
                    else "—")
            lines.append(f"| {record['setting']} | {_percent(record['test_auprc'])} | "
                         f"[{_percent(record['ci_low'])}, {_percent(record['ci_high'])}] | {rank} | {best} | "
                         f"{_percent(record['chance_auprc'])} |")
    total = sum(card.seconds.values())
    parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in card.seconds.items())
    lines += ["", f"Time for {card.metric}: {total:.1f} s ({parts}).", ""]
    return "\n".join(lines)
