"""The concept-evaluation steps (neuroneval.pipeline.concepteval_steps) on a tiny text world and an untrained tiny
LM, called with SimpleNamespace jobs as Snakemake would, and their pure helpers on synthetic inputs."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.metrics import roc_auc_score

from neuroneval.concepteval import MEASURES, BootstrapOptions, LinearConcept, ReluConcept
from neuroneval.concepteval.benchmark import (
    alignment_auc,
    build_families,
    cut_windows,
    deal_windows,
    planted_labels,
    readability_measures,
)
from neuroneval.concepteval.protocol import FAMILIES, RUNS, SUBSET_ALL, family_of
from neuroneval.concepteval.sources import load_concepts, save_concepts
from neuroneval.concepteval.tables import method_table, patterns_markdown, reliability_table
from neuroneval.models.lm import build_lm, save_lm
from neuroneval.pipeline.concepteval_steps import (
    concepteval_concepts,
    concepteval_hidden,
    concepteval_measures,
    concepteval_sae,
    concepteval_tables,
)
from neuroneval.worlds.text import build_text_world, save_text_world
from neuroneval.worlds.text_grammar import SLOT_INDEX

ROOT = Path(__file__).resolve().parents[2]
FAMILY_SPECS = {"neuron": {"count": 4, "seed": 0},
                "sae": {"count": 4, "seed": 0, "training": {"expansion": 1.0, "epochs": 3, "seed": 0}},
                "probe": {"planted": ["slot", "topic"], "c": 0.1, "holdout_fraction": 0.2, "seed": 0},
                "pca": {"count": 3}, "kmeans": {"count": 3, "seed": 0}, "random": {"count": 5, "seed": 0}}
SUBSETS = 2


def test_deal_windows_gives_disjoint_seeded_parts() -> None:
    parts = deal_windows(50, fit=20, run=10, seed=3, run_seeds=[1, 2], retest="new_data")
    assert list(parts) == ["fit", *RUNS]
    assert [len(part) for part in parts.values()] == [20, 10, 10]
    union = np.concatenate(list(parts.values()))
    assert np.unique(union).size == 40 and union.max() < 50
    again = deal_windows(50, fit=20, run=10, seed=3, run_seeds=[1, 2], retest="new_data")
    assert all(np.array_equal(parts[name], again[name]) for name in parts)
    other = deal_windows(50, fit=20, run=10, seed=3, run_seeds=[5, 2], retest="new_data")
    assert np.array_equal(other["fit"], parts["fit"]) and not np.array_equal(other["test"], parts["test"])
    with pytest.raises(ValueError, match="fit \\+ 2·run = 41 windows, the split has 40"):
        deal_windows(40, fit=21, run=10, seed=0, run_seeds=[1, 2], retest="new_data")
    with pytest.raises(ValueError, match="exactly 2 seeds"):
        deal_windows(40, fit=10, run=10, seed=0, run_seeds=[1])
    assert np.array_equal(cut_windows(35, 8), [0, 8, 16, 24])


def test_planted_labels_and_alignment_auc() -> None:
    slots = np.array([SLOT_INDEX["NOUN"], SLOT_INDEX["VERB"], 0, SLOT_INDEX["NOUN"]])
    topics = np.array([0, 1, 1, 0])
    labels, names = planted_labels(slots, topics, 2, ["slot", "topic"])
    assert names[:2] == ["slot:DET", "slot:PREP"] and names[-2:] == ["topic:0", "topic:1"]
    assert labels.shape == (4, len(SLOT_INDEX) + 2)
    assert labels[:, names.index("slot:NOUN")].tolist() == [1, 0, 0, 1]
    with pytest.raises(ValueError, match="unknown kind 'tense'"):
        planted_labels(slots, topics, 2, ["tense"])
    rng = np.random.default_rng(0)
    target = rng.random((200, 3)) < 0.3
    scores = rng.normal(size=(200, 4)) + target[:, :1] * np.array([2.0, 0.0, -1.0, 0.5])
    scores[:, 3] = np.round(scores[:, 3])  # ties
    auc = alignment_auc(scores, target)
    expected = [[roc_auc_score(target[:, t], scores[:, c]) for t in range(3)] for c in range(4)]
    np.testing.assert_allclose(auc, expected, atol=1e-12)
    assert np.isnan(alignment_auc(scores, np.zeros((200, 1)))).all()


def test_build_families_and_their_storage(tmp_path: Path) -> None:
    from neuroneval.concepteval import SAEOptions, train_sae

    rng = np.random.default_rng(0)
    labels = (rng.random((300, 2)) < 0.4).astype(np.int8)
    hidden = rng.normal(size=(300, 6)) + labels @ rng.normal(size=(2, 6)) * 2
    sae = train_sae(hidden, SAEOptions(expansion=1.0, epochs=3))
    concepts, card = build_families(hidden, labels, ["slot:A", "topic:0"], FAMILY_SPECS, sae)
    counts = card.groupby("family", sort=False).size().to_dict()
    assert list(counts) == list(FAMILIES)
    assert counts == {"neuron": 4, "sae": 4, "probe": 2, "pca": 3, "kmeans": 3, "random": 5}
    assert [family_of(concept.name) for concept in concepts] == card["family"].tolist()
    assert card.loc[card["family"] == "probe", "holdout_balanced_accuracy"].gt(0.6).all()
    assert (card["kind"] == "relu").sum() == 4
    save_concepts(tmp_path / "concepts.npz", concepts)
    loaded = load_concepts(tmp_path / "concepts.npz")
    assert [type(c) for c in loaded] == [type(c) for c in concepts]
    assert all(isinstance(c, LinearConcept | ReluConcept) for c in loaded)
    for old, new in zip(concepts, loaded, strict=True):
        assert old.name == new.name and old.bias == new.bias and np.array_equal(old.direction, new.direction)
    with pytest.raises(ValueError, match="unknown families \\['ica'\\]"):
        build_families(hidden, labels, ["slot:A", "topic:0"], {"ica": {}}, sae)


def test_reliability_of_a_repeated_measure_is_perfect_and_undefined_values_are_skipped() -> None:
    rng = np.random.default_rng(1)
    concepts = [f"neuron:{i}" for i in range(12)]
    truth = rng.normal(size=12)
    rows = []
    for run in RUNS:
        for subset in (SUBSET_ALL, "0", "1"):
            noise = 0.0 if subset == SUBSET_ALL else rng.normal(scale=0.1, size=12)
            values = truth + noise
            rows.append(pd.DataFrame({"run": run, "subset": subset, "concept": concepts, "measure": "M",
                                      "value": values}))
    measures = pd.concat(rows, ignore_index=True)
    measures.loc[(measures["concept"] == "neuron:0") & (measures["run"] == "retest"), "value"] = np.nan
    table = reliability_table(measures, concepts, ["M"], 2, BootstrapOptions(n_boot=50))
    retest = table[table["statistic"] == "pearson"].iloc[0]
    assert retest["value"] == pytest.approx(1.0) and retest["n_concepts"] == 11 and retest["acceptable"]
    alpha = table[(table["statistic"] == "cronbach_alpha") & (table["run"] == "test")].iloc[0]
    assert 0.9 < alpha["value"] <= 1.0 and alpha["n_concepts"] == 12
    subsets = np.stack([measures.query("run == 'test' and subset == @j")["value"].to_numpy() for j in ("0", "1")])
    assert alpha["subset_sd"] == pytest.approx(np.sqrt(np.var(subsets, axis=0, ddof=1).mean()), rel=1e-12)
    assert alpha["sign_agreement"] == pytest.approx(np.mean(np.all(np.sign(subsets) == np.sign(subsets.mean(0)),
                                                                   axis=0)), rel=1e-12)
    assert np.isnan(retest["sign_agreement"])  # the subset noise belongs to the α rows only
    flat = measures.assign(value=np.where(measures["concept"] == "neuron:0", np.nan, 0.3 * (1 + 1e-15)))
    flat.loc[flat["concept"] == "neuron:1", "value"] = 0.3  # rounding noise only: no r, no α
    assert reliability_table(flat, concepts, ["M"], 2, BootstrapOptions(n_boot=10))["value"].isna().all()


def test_method_table_gives_each_family_its_mean_and_median_planted_alignment() -> None:
    """Fig. 4's rows: per family the mean of each measure (NaN scores left out) and the median planted alignment of
    the family's concepts, the premise of the order the paper finds (NaN without alignment)."""
    rng = np.random.default_rng(3)
    concepts = [f"neuron:{i}" for i in range(6)] + [f"sae:{i}" for i in range(5)]
    scores = rng.normal(size=(11, 2))
    scores[7, 1] = np.nan  # an SAE feature that never fires: no score
    alignment = rng.uniform(0.5, 1.0, size=11)
    alignment[2] = np.nan
    table = method_table(scores, concepts, ["A", "B"], BootstrapOptions(n_boot=20), alignment).set_index(
        ["family", "measure"])
    assert table.loc[("neuron", "A"), "mean"] == pytest.approx(scores[:6, 0].mean(), rel=1e-12)
    assert table.loc[("sae", "B"), "mean"] == pytest.approx(np.nanmean(scores[6:, 1]), rel=1e-12)
    assert table.loc[("sae", "B"), "n_concepts"] == 4
    assert table.loc[("neuron", "B"), "median_alignment"] == pytest.approx(np.nanmedian(alignment[:6]), rel=1e-12)
    assert table.loc[("sae", "A"), "median_alignment"] == pytest.approx(np.median(alignment[6:]), rel=1e-12)
    unaligned = method_table(scores, concepts, ["A", "B"], BootstrapOptions(n_boot=20))
    assert unaligned["median_alignment"].isna().all()


def test_schema_enums_are_the_library_measures() -> None:
    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    spec = schema["properties"]["concepteval"]["properties"]
    assert spec["faithfulness"]["properties"]["measures"]["items"]["enum"] == list(MEASURES)
    assert spec["comparison"]["items"]["enum"] == [*MEASURES, *readability_measures()]
    assert list(spec["families"]["properties"]) == list(FAMILIES)


def test_patterns_markdown_shows_every_probe_and_escapes_tokens() -> None:
    scores = pd.DataFrame({"model": "lm", "concept": ["probe:slot:NOUN", "neuron:1", "neuron:2", "neuron:3"] * 2,
                           "measure": ["IN-EmbCos"] * 4 + ["OUT-EmbCos"] * 4,
                           "value": [0.5, 0.1, 0.9, 0.3, 0.5, 0.2, 0.8, 0.25]})
    patterns = pd.DataFrame({"model": "lm", "concept": ["probe:slot:NOUN", "probe:slot:NOUN", "neuron:2"],
                             "side": ["IN", "OUT", "IN"], "rank": [0, 0, 0], "token_id": [3, 4, 5],
                             "token": ["a|b", "cat", "dog"]})
    text = patterns_markdown(patterns, scores, 1)
    assert "`probe:slot:NOUN` | a\\|b | cat |" in text
    assert "`neuron:2` | dog | – | 0.900 | 0.800 |" in text  # best neuron
    assert "`neuron:1`" in text and "`neuron:3`" not in text  # worst by mean rank: neuron:1 (4th on both)


@pytest.fixture(scope="module")
def steps_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every step in DAG order on a 60-document world and an untrained 1-block LM (context 8)."""
    root = tmp_path_factory.mktemp("concepteval_steps")
    world = build_text_world(60, seed=0, split="train", vocab_size=60, n_topics=2, doc_length=24.0)
    save_text_world(world, root / "world")
    save_lm(build_lm(len(world.vocabulary), size="tiny", context_length=8, seed=0), root / "lm",
            vocabulary=world.vocabulary)
    data, runs = root / "data", root / "runs" / "lm"
    job = SimpleNamespace(input=SimpleNamespace(world=str(root / "world"), model=str(root / "lm")),
                          output=SimpleNamespace(hidden=str(data / "hidden.npz")),
                          params=SimpleNamespace(layer=0, site="resid", windows={"seed": 0, "fit": 60, "run": 24},
                                                 runs=[1, 2], planted=["slot", "topic"], model_spec=None,
                                                 window_length=None),
                          wildcards=SimpleNamespace(lm="lm"), threads=1)
    concepteval_hidden(job)
    concepteval_sae(SimpleNamespace(input=SimpleNamespace(hidden=str(data / "hidden.npz")),
                                    output=SimpleNamespace(sae=str(data / "sae.npz"), card=str(data / "sae.json")),
                                    params=SimpleNamespace(training=FAMILY_SPECS["sae"]["training"]),
                                    wildcards=SimpleNamespace(lm="lm"), threads=1))
    concepteval_concepts(SimpleNamespace(input=SimpleNamespace(hidden=str(data / "hidden.npz"),
                                                               sae=str(data / "sae.npz")),
                                         output=SimpleNamespace(concepts=str(data / "concepts.npz"),
                                                                card=str(data / "concepts.csv")),
                                         params=SimpleNamespace(families=FAMILY_SPECS, family_set="all"),
                                         wildcards=SimpleNamespace(lm="lm"), threads=1))
    for run in RUNS:
        concepteval_measures(SimpleNamespace(
            input=SimpleNamespace(world=str(root / "world"), model=str(root / "lm"), hidden=str(data / "hidden.npz"),
                                  concepts=str(data / "concepts.npz")),
            output=SimpleNamespace(measures=str(runs / f"{run}.csv"), patterns=str(runs / f"{run}_patterns.csv"),
                                   truth=str(runs / f"{run}_truth.csv")),
            params=SimpleNamespace(layer=0, site="resid", subsets=SUBSETS, faithfulness={"concept_batch": 16},
                                   model_spec=None,
                                   patterns={"top_k": 5, "n_high": 8}, readability={"window": 16},
                                   simulation={"top_k": 10, "n_tokens": 3}),
            wildcards=SimpleNamespace(lm="lm", run=run), threads=1))
    results = root / "results"
    concepteval_tables(SimpleNamespace(
        input=SimpleNamespace(measures=[str(runs / f"{run}.csv") for run in RUNS],
                              patterns=[str(runs / f"{run}_patterns.csv") for run in RUNS],
                              truth=[str(runs / f"{run}_truth.csv") for run in RUNS]),
        output=SimpleNamespace(measures=results / "measures.csv", reliability=results / "reliability.csv",
                               reliability_figure=results / "reliability.png", inter_rater=results / "inter_rater.csv",
                               validity=results / "validity.csv", mtmm=results / "mtmm.csv",
                               mtmm_figure=results / "mtmm.png", methods=results / "methods.csv",
                               methods_figure=results / "methods.png", patterns=results / "patterns.md"),
        params=SimpleNamespace(subsets=SUBSETS, faithfulness_measures=list(MEASURES),
                               measurement={"bootstrap": {"n_boot": 30}}, raters={"n_raters": 3},
                               comparison=["ABL-Div", "IN-EmbCos"], patterns_shown=1),
        wildcards=SimpleNamespace(), threads=1))
    return root


def test_steps_write_every_table(steps_run: Path) -> None:
    results = steps_run / "results"
    n_concepts = 4 + 4 + (len(SLOT_INDEX) + 2) + 3 + 3 + 5
    measures = pd.read_csv(results / "measures.csv")
    names = [*MEASURES, *readability_measures(["IN"])]  # UCI/UMass on the input side only (paper 004 Sec. 5.1)
    assert "OUT-UCI" not in names and "IN-UMass" in names and "OUT-EmbCos" in names
    assert list(measures.columns) == ["model", "run", "family", "concept", "measure", "value"]
    assert len(measures) == len(RUNS) * n_concepts * len(names)
    assert set(measures["measure"]) == set(names) and set(measures["run"]) == set(RUNS)
    run_table = pd.read_csv(steps_run / "runs" / "lm" / "test.csv", dtype={"subset": str})
    assert set(run_table["subset"]) == {SUBSET_ALL, "0", "1"}
    faithful = measures[measures["measure"].isin(MEASURES)]
    assert faithful["value"].notna().all()
    reliability = pd.read_csv(results / "reliability.csv")
    assert len(reliability) == len(names) * 3
    assert set(zip(reliability["statistic"], reliability["run"], strict=True)) == {
        ("pearson", "test-retest"), ("cronbach_alpha", "test"), ("cronbach_alpha", "retest")}
    wide = measures[measures["measure"] == "ABL-Div"].pivot(index="concept", columns="run", values="value")
    retest = reliability[(reliability["measure"] == "ABL-Div") & (reliability["statistic"] == "pearson")]
    assert retest["value"].iloc[0] == pytest.approx(np.corrcoef(wide["test"], wide["retest"])[0, 1], rel=1e-4)
    validity = pd.read_csv(results / "validity.csv")
    assert set(validity["criterion"]) == {"planted", "alignment", "raters"}
    planted = validity[validity["criterion"] == "planted"]
    assert (planted["n_concepts"] == len(SLOT_INDEX) + 2 + 5).all()
    raters = pd.read_csv(results / "inter_rater.csv")
    assert len(raters) == 3 and raters["value"].between(-1, 1).all()
    mtmm = pd.read_csv(results / "mtmm.csv")
    diagonal = mtmm[mtmm["measure_a"] == mtmm["measure_b"]]
    assert (diagonal["statistic"] == "cronbach_alpha").all()
    methods = pd.read_csv(results / "methods.csv")
    assert list(methods["family"].drop_duplicates()) == ["neuron", "sae", "probe", "probe:slot", "probe:topic", "pca",
                                                         "kmeans", "random"]
    assert set(methods["measure"]) == {"ABL-Div", "IN-EmbCos"}
    assert (methods["ci_low"] <= methods["mean"] + 1e-12).all()
    test_rows = measures[measures["run"] == "test"]
    for (family, measure), frame in methods.groupby(["family", "measure"]):
        members = (test_rows["family"] == family) | test_rows["concept"].str.startswith(f"{family}:")
        values = test_rows[members & (test_rows["measure"] == measure)]["value"].dropna()
        assert frame["mean"].iloc[0] == pytest.approx(values.mean(), rel=1e-5), (family, measure)
    assert (methods.loc[methods["measure"] == "ABL-Div", "ci_low"] >= 0).all()  # a KL divergence
    text = (results / "patterns.md").read_text()
    assert "## lm" in text and "`probe:slot:NOUN`" in text
    for figure in ("reliability.png", "mtmm.png", "methods.png"):
        assert (results / figure).stat().st_size > 5_000
    truth = pd.read_csv(steps_run / "runs" / "lm" / "test_truth.csv")
    assert truth["alignment"].between(0, 1).all() and len(truth) == n_concepts


def test_sim_corr_explains_on_even_windows_and_scores_on_odd_ones(steps_run: Path) -> None:
    """The run's SIM-Corr is simulation_readability on the run's windows split even/odd, with the LM's activations."""
    from neuroneval.concepteval import SimulationOptions, concept_activation_function, simulation_readability
    from neuroneval.models.lm import load_lm

    with np.load(steps_run / "data" / "hidden.npz") as data:
        windows = data["test_windows"]
    concepts = load_concepts(steps_run / "data" / "concepts.npz")
    values = concept_activation_function(load_lm(steps_run / "lm"), concepts, layer=0)(windows)
    expected = simulation_readability(windows[0::2], values[0::2], windows[1::2], values[1::2],
                                      [concept.name for concept in concepts],
                                      SimulationOptions(top_k=10, n_tokens=3)).set_index("concept")["value"]
    run = pd.read_csv(steps_run / "runs" / "lm" / "test.csv", dtype={"subset": str})
    ours = run[(run["subset"] == SUBSET_ALL) & (run["measure"] == "SIM-Corr")].set_index("concept")["value"]
    assert len(ours) == len(concepts) and ours.between(-1, 1).all()
    np.testing.assert_allclose(ours.reindex(expected.index).to_numpy(), expected.to_numpy(), atol=1e-5)  # CSV digits


def test_the_step_module_is_glue_and_options_are_typed() -> None:
    """Issue 35: the step module reads, calls one library function, writes (≤ 300 lines, no other step module, no
    private library name); the options it passes are parsed once and name an unknown key."""
    import ast

    from neuroneval.concepteval.benchmark import MeasureOptions, WindowOptions
    from neuroneval.concepteval.tables import TableOptions
    from neuroneval.options import OptionsError

    path = ROOT / "src/neuroneval/pipeline/concepteval_steps.py"
    assert len(path.read_text().splitlines()) <= 300
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("neuroneval"):
            assert not node.module.endswith("_steps"), node.module
            assert not any(alias.name.startswith("_") for alias in node.names), node.module
    options = MeasureOptions.from_params({"layer": 0, "site": "mlp", "subsets": 3, "faithfulness": {},
                                          "readability": {"window": 16}, "patterns": {"top_k": 5}})
    assert options.readability.window == 16 and options.patterns.top_k == 5 and options.site == "mlp"
    with pytest.raises(OptionsError, match="unknown option 'windw'"):
        MeasureOptions.from_params({"readability": {"windw": 16}})
    with pytest.raises(OptionsError, match="site must be one of"):
        MeasureOptions.from_params({"site": "attn"})
    with pytest.raises(OptionsError, match="subsets must lie in"):
        WindowOptions.from_params({"subsets": 1})
    assert TableOptions.from_params({"comparison": ["ABL-Div"]}).comparison == ("ABL-Div",)


def test_the_retest_recomputes_the_same_measures_on_the_same_windows(steps_run: Path) -> None:
    """Paper 004 Sec. 4.1 (windows.retest: same_data, the default): the retest run reads the test run's windows,
    so a deterministic measure gives the same value twice (Pearson r = 1, the paper's Fig. 2 finding); the data-
    subset variance is Cronbach's α's business. ``new_data`` deals disjoint windows instead."""
    with np.load(steps_run / "data" / "hidden.npz") as data:
        assert np.array_equal(data["test_windows"], data["retest_windows"])
        assert np.array_equal(data["test_labels"], data["retest_labels"])
    runs = {run: pd.read_csv(steps_run / "runs" / "lm" / f"{run}.csv", dtype={"subset": str}) for run in RUNS}
    np.testing.assert_allclose(runs["test"]["value"], runs["retest"]["value"], rtol=1e-6, atol=1e-9)
    reliability = pd.read_csv(steps_run / "results" / "reliability.csv")
    retest = reliability[(reliability["statistic"] == "pearson") & reliability["value"].notna()]
    assert len(retest) > 0 and np.allclose(retest["value"], 1.0)
    same = deal_windows(50, fit=20, run=10, seed=3, run_seeds=[1, 2])
    new = deal_windows(50, fit=20, run=10, seed=3, run_seeds=[1, 2], retest="new_data")
    assert np.array_equal(same["test"], new["test"]) and np.array_equal(same["retest"], same["test"])
    assert np.intersect1d(new["test"], new["retest"]).size == 0
    with pytest.raises(ValueError, match="retest must be one of"):
        deal_windows(50, fit=20, run=10, seed=3, run_seeds=[1, 2], retest="again")
