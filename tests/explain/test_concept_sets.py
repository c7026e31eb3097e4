"""Concept subsets of methods and the scoring concept table of an explained setting
(neuroneval.explain.concept_sets, used by explain_setting and explain_score)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from scipy.stats import pearsonr

from neuroneval import io
from neuroneval.explain import read_explanations
from neuroneval.explain.benchmark import holdout_mask
from neuroneval.explain.concept_sets import MethodConcepts, method_concept_prefixes
from neuroneval.explain_catalogue import method_files, method_options
from neuroneval.options import OptionsError
from neuroneval.pipeline.explain_steps import explain_score, explain_setting

SUBSET = {"methods": ["netdissect", "compexp"], "prefixes": ["colour:", "texture:"]}
PREFIXES = ["class:", "colour:", "texture:"]


def test_listed_methods_read_the_subset_and_the_others_every_concept() -> None:
    assert method_concept_prefixes("netdissect", PREFIXES, SUBSET) == ["colour:", "texture:"]
    assert method_concept_prefixes("compexp", PREFIXES, MethodConcepts.from_params(SUBSET)) == ["colour:", "texture:"]
    assert method_concept_prefixes("le_pseudo", PREFIXES, SUBSET) == PREFIXES
    assert method_concept_prefixes("netdissect", PREFIXES, None) == PREFIXES
    assert method_concept_prefixes("netdissect", [], SUBSET) == ["colour:", "texture:"]  # the setting reads all


def test_a_subset_outside_the_settings_concepts_is_an_error_naming_the_key() -> None:
    with pytest.raises(ValueError, match=r"explain\.settings\.s\.method_concepts\.prefixes: 'scene:'"):
        method_concept_prefixes("netdissect", PREFIXES, {"methods": ["netdissect"], "prefixes": ["scene:"]},
                                setting="s")
    with pytest.raises(OptionsError, match=r"MethodConcepts\.prefixes"):
        MethodConcepts.from_params({"methods": ["netdissect"], "prefixes": []})
    with pytest.raises(OptionsError, match="unknown option 'method'"):
        MethodConcepts.from_params({"method": ["netdissect"], "prefixes": ["colour:"]})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """800 inputs; 4 class concepts, each the AND of one colour and one texture (2 + 2 low-level concepts); 4 units,
    unit k a noisy copy of class k. Pseudo-labels: a noisy sigmoid of the labels."""
    root = tmp_path_factory.mktemp("concept_sets")
    rng = np.random.default_rng(3)
    n = 800
    colour, texture = rng.integers(0, 2, n), rng.integers(0, 2, n)
    columns = {"colour:red": colour == 0, "colour:blue": colour == 1, "texture:dotted": texture == 0,
               "texture:striped": texture == 1}
    classes = {f"class:{c}_{t}": columns[c] & columns[t] for c in ("colour:red", "colour:blue")
               for t in ("texture:dotted", "texture:striped")}
    labels = pd.DataFrame({"input_id": np.arange(n), **{k: v.astype(np.float32) for k, v in {**classes,
                                                                                             **columns}.items()}})
    class_names = list(classes)
    activations = labels[class_names].to_numpy() * 2.0 + rng.normal(0.0, 0.4, (n, 4))
    io.write_concept_table(root / "labels.parquet", labels, metadata={"source": "labels"})
    names = [c for c in labels.columns if c != "input_id"]
    pseudo = expit(6.0 * (labels[names].to_numpy() - 0.5) + rng.normal(0.0, 1.0, (n, len(names))))
    io.write_concept_table(root / "pseudo.parquet", pd.DataFrame({"input_id": np.arange(n), **dict(zip(
        names, pseudo.T, strict=True))}), metadata={"source": "pseudo:clip", "a": 6.0, "b": 0.5})
    units = [f"u{k}" for k in range(4)]
    io.write_activation_table(root / "act.parquet", pd.DataFrame({"input_id": np.arange(n), **dict(zip(
        units, activations.T, strict=True))}), metadata={"model": "m", "layer": "h", "dataset": "toy"})
    pd.DataFrame({"unit": units, "concept": class_names}).to_csv(root / "truth.csv", index=False)
    return {"root": root, "labels": root / "labels.parquet", "pseudo": root / "pseudo.parquet",
            "activations": root / "act.parquet", "truth": root / "truth.csv"}


SETTING = {"dataset": "toy", "units": [{"model": "m", "layer": "h"}],
           "concepts": {"source": "pseudo:clip", "prefixes": PREFIXES}}
SPEC = {"methods": ["netdissect", "le_pseudo"], "scored_on": "setting", "method_concepts": SUBSET}
EXPLAIN = {"methods": {"netdissect": {"quantile": 0.05}}, "max_length": 2, "simple": [], "random_seed": 0}


def _explain(world: dict[str, Path], method: str) -> pd.DataFrame:
    output = world["root"] / "explanations" / f"{method}.csv"
    explain_setting(SimpleNamespace(
        input=SimpleNamespace(activations=[str(world["activations"])], concepts=str(world["pseudo"]),
                              labels=str(world["labels"]), pseudo=str(world["pseudo"]), truth=str(world["truth"])),
        output=SimpleNamespace(explanations=str(output)),
        params=SimpleNamespace(setting=SETTING, spec=SPEC, options=method_options(EXPLAIN, method),
                               holdout_fraction=0.25, seed=0, batch_size=64, pooling="mean"),
        wildcards=SimpleNamespace(setting="toy", method=method), threads=1))
    return read_explanations(output)


def test_a_restricted_method_names_only_low_level_concepts(world: dict[str, Path]) -> None:
    restricted = _explain(world, "netdissect")
    assert restricted["explanation"].str.match(r"^(colour|texture):").all()
    free = _explain(world, "le_pseudo")
    assert free["explanation"].str.contains("class:").all()


def test_scored_on_setting_simulates_with_the_settings_pseudo_labels(world: dict[str, Path]) -> None:
    """The netdissect row of unit k (one concept) scores Pearson's r of that concept's held-out pseudo-label
    column with the unit's held-out activations (scipy), not the labels' r."""
    methods = method_files(SPEC, EXPLAIN["simple"])
    frames = {method: _explain(world, method) for method in methods}
    output = world["root"] / "scores.csv"
    explain_score(SimpleNamespace(
        input=SimpleNamespace(activations=[str(world["activations"])], labels=str(world["labels"]),
                              scorer=str(world["pseudo"]), truth=str(world["truth"]),
                              explanations=[str(world["root"] / "explanations" / f"{m}.csv") for m in methods]),
        output=SimpleNamespace(scores=str(output)),
        params=SimpleNamespace(setting=SETTING, methods=methods, holdout_fraction=0.25, seed=0, alpha=0.05),
        wildcards=SimpleNamespace(setting="toy"), threads=1))
    scores = pd.read_csv(output, dtype={"unit": str})
    held = holdout_mask(800, 0.25, 0)
    pseudo, _ = io.read_concept_table(world["pseudo"])
    labels, _ = io.read_concept_table(world["labels"])
    activations, _ = io.read_activation_table(world["activations"])
    rows = scores[(scores["method"] == "netdissect")].set_index("unit")
    for unit, concept in zip(frames["netdissect"]["unit"], frames["netdissect"]["explanation"], strict=True):
        expected = pearsonr(pseudo[concept].to_numpy()[held], activations[unit].to_numpy()[held]).statistic
        on_labels = pearsonr(labels[concept].to_numpy()[held], activations[unit].to_numpy()[held]).statistic
        assert rows.loc[unit, "simulation_correlation"] == pytest.approx(expected, abs=1e-6)
        assert abs(expected - on_labels) > 1e-3
