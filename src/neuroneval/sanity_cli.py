"""``neuroneval sanity --metric``: a metric's sanity card from a workflow folder's params, data and built tables.

Reads the params (``params.yaml`` and any overlays, merged key by key as Snakemake's ``--configfile`` does), each
sanity and meta setting's tables under ``<root>/data`` (``neuroneval.settings``' paths; settings whose tables are
not built are skipped and named), and the built-ins' results under ``<root>/results``:
``sanity/experimental/<setting>.csv``, ``sanity/theoretical/<ties>.csv`` and ``meta/<setting>.csv``. Scores the
metric with :func:`neuroneval.sanity.card.score_for_card` and writes, under ``<out>/<metric>/``: ``card.md``,
``verdicts.csv``, ``per_setting.csv``, ``meta.csv``, the metric's tidy ``experimental.csv``, ``theoretical.csv``,
``meta_rows.csv`` (rows shaped like the workflow's files) and ``card.png``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from neuroneval import io


@dataclass(frozen=True)
class CardRun:
    """What one card run wrote and skipped."""

    metric: str
    folder: Path
    text: str
    skipped_settings: tuple[str, ...]


def merged_params(paths: Sequence[str | Path]) -> dict[str, Any]:
    """The params files merged in order: mappings key by key, everything else (lists included) replaced."""
    merged: dict[str, Any] = {}
    for path in paths:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{path}: a params file must hold a mapping, got {type(loaded).__name__}")
        merged = _merge(merged, loaded)
    return merged


def _merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overlay.items():
        out[key] = _merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) \
            else value
    return out


def card_folder_name(metric: str) -> str:
    """A file-system-safe folder name for a metric (``pkg.mod:fn`` → ``pkg.mod-fn``)."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", metric)


def _read_tidy(paths: Sequence[Path]) -> pd.DataFrame:
    frames = [pd.read_csv(path) for path in paths if path.exists()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def write_cards(metrics: Sequence[str], *, params_files: Sequence[str | Path], root: str | Path = ".",
                out: str | Path = "results/your_metric", settings: Sequence[str] | None = None,
                workers: int = 1) -> list[CardRun]:
    """One card per metric (see the module docstring); ``settings`` restricts the sanity and meta settings."""
    from neuroneval.figures.card import plot_sanity_card
    from neuroneval.meta import MetaOptions
    from neuroneval.meta.discrimination import meta_options_block
    from neuroneval.metrics import METRICS, get_spec
    from neuroneval.sanity.card import CardSetting, card_text, sanity_card, score_for_card
    from neuroneval.sanity.options import SanityOptions
    from neuroneval.settings import (
        load_setting,
        setting_activation_paths,
        setting_concept_path,
        truth_method,
        truth_path,
    )

    for metric in metrics:
        get_spec(metric)  # a clear error naming the metric before any data is read
    params = merged_params(params_files)
    root = Path(root)
    meta = MetaOptions.from_params(meta_options_block(params["meta"]))
    sanity = SanityOptions.from_params(params["sanity"])
    sanity_settings, meta_settings = list(sanity.settings), list(params["meta"]["settings"])
    wanted = list(dict.fromkeys([*sanity_settings, *meta_settings]))
    if settings is not None:
        unknown = [name for name in settings if name not in params["settings"]]
        if unknown:
            raise ValueError(f"--settings: unknown setting(s) {unknown}; the params define "
                             f"{sorted(params['settings'])}")
        wanted = list(settings)
    data_root = root / "data"
    card_settings, skipped = [], []
    for name in wanted:
        config = params["settings"][name]
        activation_files = setting_activation_paths(config, root=data_root)
        concept_file, truth_file = setting_concept_path(config, root=data_root), truth_path(name, root=data_root)
        if not all(path.exists() for path in [*activation_files, concept_file, truth_file]):
            skipped.append(name)
            continue
        truth = truth_method(config)
        card_settings.append(CardSetting(
            name=name, data=load_setting(activation_files, concept_file,
                                         concept_prefixes=config["concepts"].get("prefixes", [])),
            truth=pd.read_csv(truth_file, dtype=str), sanity=name in sanity_settings or settings is not None,
            meta=name in meta_settings or settings is not None,
            iou_alpha=float(truth["alpha"]) if truth["method"] == "iou" else None))
    if not card_settings:
        raise ValueError(f"none of the settings {wanted} has its tables under {data_root} (activations, concepts, "
                         f"truth); build them first, e.g. `snakemake data/truth/<setting>.csv`")
    results = root / "results"
    used_sanity = [setting.name for setting in card_settings if setting.sanity]
    builtin_experimental = _read_tidy([results / "sanity" / "experimental" / f"{name}.csv" for name in used_sanity])
    builtin_theoretical = _read_tidy([results / "sanity" / "theoretical" / f"{sanity.ties}.csv"])
    builtin_meta = _read_tidy([results / "meta" / f"{setting.name}.csv" for setting in card_settings if setting.meta])
    runs = []
    for metric in metrics:
        scores = score_for_card(metric, card_settings, meta=meta, sanity=sanity, workers=workers)
        card = sanity_card(metric, scores, builtin_experimental=builtin_experimental,
                           builtin_theoretical=builtin_theoretical, builtin_meta=builtin_meta,
                           builtin_metrics=list(METRICS), sanity=sanity, settings=used_sanity)
        folder = Path(out) / card_folder_name(metric)
        text = card_text(card)
        if skipped:
            text += f"Skipped (tables not built under {data_root}): {', '.join(skipped)}.\n"
        io.write_text(folder / "card.md", text)
        io.write_csv(folder / "verdicts.csv", card.verdicts, float_format="%.4f")
        io.write_csv(folder / "per_setting.csv", card.per_setting, float_format="%.4f")
        io.write_csv(folder / "meta.csv", card.meta)
        io.write_csv(folder / "experimental.csv", scores.experimental)
        io.write_csv(folder / "theoretical.csv", scores.theoretical)
        io.write_csv(folder / "meta_rows.csv", scores.meta)
        plot_sanity_card(card, threshold=sanity.pass_threshold, path=folder / "card.png")
        runs.append(CardRun(metric, folder, text, tuple(skipped)))
    return runs


def add_sanity_parser(commands: Any) -> None:
    """The ``sanity`` sub-command: your metric's sanity card (docs/your_metric.md)."""
    parser = commands.add_parser("sanity", help="sanity-check your own metric beside the built-in ones (card + figure)")
    parser.add_argument("--metric", required=True, action="append", metavar="MODULE:FUNCTION",
                        help="your metric: package.module:function or an entry point of 'neuroneval.metrics' "
                             "(repeatable)")
    parser.add_argument("--params", action="append", default=None, metavar="YAML",
                        help="params file and overlays, merged in order (repeatable; default: params.yaml in --root)")
    parser.add_argument("--root", default=".", help="workflow folder with data/ and results/ (default: .)")
    parser.add_argument("--out", default=None, help="folder of the cards (default: <root>/results/your_metric)")
    parser.add_argument("--settings", nargs="+", default=None,
                        help="settings to score on (default: the params' sanity.settings and meta.settings)")
    parser.add_argument("--workers", type=int, default=1, help="processes of the theoretical test (default 1)")


def run_sanity(arguments: Any) -> None:
    """Write and print the card of every ``--metric``."""
    root = Path(arguments.root)
    if arguments.workers < 1:
        raise ValueError(f"--workers must be >= 1, got {arguments.workers}")
    params_files = arguments.params or [root / "params.yaml"]
    for path in params_files:
        if not Path(path).exists():
            raise ValueError(f"--params: {path} does not exist")
    out = Path(arguments.out) if arguments.out else root / "results" / "your_metric"
    for run in write_cards(arguments.metric, params_files=params_files, root=root, out=out,
                           settings=arguments.settings, workers=arguments.workers):
        print(run.text)
        print(f"wrote {run.folder}/card.md, card.png, verdicts.csv, per_setting.csv, meta.csv")
