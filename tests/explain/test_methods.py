"""Each method recovers planted truth; its scores match an independent oracle (sklearn, scipy, brute force)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.metrics import jaccard_score, roc_auc_score

from neuroneval.explain import (
    METHODS,
    ClipDissectOptions,
    CompositionalOptions,
    DissectionOptions,
    LinearOptions,
    OptionsError,
    ProbingData,
    caption_explanations,
    clip_dissect,
    clustered_explanations,
    compositional_explanations,
    explain,
    invert_explanations,
    linear_explanations,
    network_dissection,
    parse,
    simulate,
    soft_wpmi,
    top_token_explanations,
)
from neuroneval.explain.options import CaptionOptions, ClusteredOptions
from neuroneval.metrics import score


def _planted_units(concepts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Unit 0 = c3 OR c7, unit 1 = c4 AND NOT c5, unit 2 = c9 (small positive jitter keeps ties out)."""
    c = concepts
    jitter = 0.01 * rng.random(c.shape[0])
    return np.stack([np.maximum(c[:, 3], c[:, 7]) + jitter, c[:, 4] * (1 - c[:, 5]) + jitter, c[:, 9] + jitter], 1)


def test_compositional_finds_planted_formulas_with_sklearn_iou(binary_world, probing) -> None:
    concepts, names = binary_world
    units = _planted_units(concepts, np.random.default_rng(1))
    expected = ["c3 OR c7", "c4 AND NOT c5", "c9"]
    for k, formula in enumerate(expected):
        quantile = float(simulate(formula, concepts, names).mean())  # top fraction = the formula's positives
        frame = compositional_explanations(units[:, [k]], probing, CompositionalOptions(quantile=quantile))
        found = parse(frame.loc[0, "explanation"], frame.loc[0, "kind"])
        assert simulate(found, concepts, names).tolist() == simulate(formula, concepts, names).tolist()
        active = units[:, k] >= np.sort(units[:, k])[::-1][int(np.ceil(quantile * len(units))) - 1]
        oracle = jaccard_score(active, simulate(found, concepts, names) >= 0.5)
        assert frame.loc[0, "iou"] == pytest.approx(oracle) == pytest.approx(1.0)


def test_length_one_search_is_network_dissection_is_the_engine_iou(binary_world, probing) -> None:
    concepts, _ = binary_world
    units = _planted_units(concepts, np.random.default_rng(2)) + np.random.default_rng(3).random((2000, 3))
    dissection = network_dissection(units, probing, DissectionOptions(quantile=0.05))
    single = compositional_explanations(units, probing, CompositionalOptions(max_length=1, quantile=0.05))
    assert list(dissection["explanation"]) == list(single["explanation"])
    np.testing.assert_allclose(dissection["iou"], single["iou"])
    np.testing.assert_allclose(dissection["iou"], score("iou", units, concepts, alpha=0.05).max(axis=1))


def test_spatial_dissection_matches_brute_force_iou() -> None:
    rng = np.random.default_rng(4)
    n, t, size = 60, 5, 8
    masks = rng.random((n, t, size, size)) < 0.2
    maps = np.zeros((n, 2, 4, 4))
    maps[:, 0] = masks[:, 2].reshape(n, 4, 2, 4, 2).mean(axis=(2, 4)) + 0.001 * rng.random((n, 4, 4))
    maps[:, 1] = rng.random((n, 4, 4))
    probing = ProbingData.build(rng.random((n, t)), [f"m{i}" for i in range(t)], masks=masks)
    frame = network_dissection(maps, probing, DissectionOptions(quantile=0.1))
    from neuroneval.explain.dissection import upsample

    up = upsample(maps, (size, size))
    for k in range(2):
        values = up[:, k].ravel()
        cutoff = np.sort(values)[::-1][int(np.ceil(0.1 * values.size)) - 1]
        active = values >= cutoff
        brute = [(active & masks[:, j].ravel()).sum() / (active | masks[:, j].ravel()).sum() for j in range(t)]
        assert frame.loc[k, "iou"] == pytest.approx(max(brute))
        assert frame.loc[k, "explanation"] == f"m{int(np.argmax(brute))}"
    assert frame.loc[0, "explanation"] == "m2"


def test_invert_finds_planted_formulas_with_sklearn_auc(binary_world, probing) -> None:
    concepts, names = binary_world
    units = _planted_units(concepts, np.random.default_rng(5))
    frame = invert_explanations(units, probing, CompositionalOptions(max_length=2))
    for k, formula in enumerate(["c3 OR c7", "c4 AND NOT c5", "c9"]):
        found = parse(frame.loc[k, "explanation"], frame.loc[k, "kind"])
        assert simulate(found, concepts, names).tolist() == simulate(formula, concepts, names).tolist()
        assert frame.loc[k, "auc"] == pytest.approx(roc_auc_score(simulate(found, concepts, names), units[:, k]))
        assert frame.loc[k, "auc"] == pytest.approx(1.0)


def test_invert_auc_equals_sklearn_on_noisy_units(binary_world, probing) -> None:
    concepts, names = binary_world
    units = np.random.default_rng(6).random((2000, 4)) + concepts[:, :4]
    frame = invert_explanations(units, probing, CompositionalOptions(max_length=3, beam_size=3))
    for k in range(4):
        label = simulate(parse(frame.loc[k, "explanation"], frame.loc[k, "kind"]), concepts, names)
        assert frame.loc[k, "auc"] == pytest.approx(roc_auc_score(label, units[:, k]))


def test_clustered_explanations_find_each_activation_level(binary_world, probing) -> None:
    concepts, names = binary_world
    unit = 1.0 * concepts[:, 2] * (1 - concepts[:, 6]) + 3.0 * concepts[:, 6]
    frame = clustered_explanations(unit[:, None], probing, ClusteredOptions(n_clusters=2, max_length=2))
    explanation = parse(frame.loc[0, "explanation"], "clustered")
    assert [(low, high) for low, high, _ in explanation.clusters] == [(1.0, 1.0), (3.0, 3.0)]
    assert simulate(explanation.clusters[1][2], concepts, names).tolist() == concepts[:, 6].tolist()
    np.testing.assert_allclose(simulate(explanation, concepts, names), unit)


def _soft_wpmi_reference(activations, similarity, options) -> np.ndarray:
    """Per (unit, concept) loops over the formulas of the CLIP-Dissect docstring."""
    n, k_units = activations.shape
    probabilities = np.exp(options.temperature * similarity)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    top_k = min(options.top_k, n)
    log_conditional = np.zeros((k_units, similarity.shape[1]))
    for k in range(k_units):
        top = np.argsort(-activations[:, k], kind="stable")[:top_k]
        for t in range(similarity.shape[1]):
            total = 0.0
            for j, i in enumerate(top):
                p = options.p_start - j / top_k * (options.p_start - options.p_end)
                total += np.log(1 - p + p * probabilities[i, t] + 1e-7)
            log_conditional[k, t] = total
    prior = np.log(np.mean(np.exp(log_conditional - log_conditional.max(axis=0)), axis=0)) + log_conditional.max(0)
    return log_conditional - options.lam * prior


def test_clip_dissect_recovers_planted_concepts_and_matches_the_loop(binary_world) -> None:
    concepts, names = binary_world
    rng = np.random.default_rng(8)
    similarity = 0.25 * concepts + 0.02 * rng.standard_normal(concepts.shape)
    units = concepts[:, [3, 11, 20]] + 0.05 * rng.random((2000, 3))
    options = ClipDissectOptions(top_k=30)
    frame = clip_dissect(units, similarity, names, options)
    assert list(frame["explanation"]) == ["c3", "c11", "c20"]
    np.testing.assert_allclose(soft_wpmi(units, similarity, options), _soft_wpmi_reference(units, similarity, options),
                               rtol=1e-9, atol=1e-9)


def test_linear_explanations_recover_weights_like_scipy_nnls() -> None:
    rng = np.random.default_rng(9)
    n, t = 3000, 30
    concepts = rng.random((n, t))
    names = [f"k{i}" for i in range(t)]
    unit = 2.0 * concepts[:, 4] + 1.0 * concepts[:, 17] + 0.05 * rng.standard_normal(n)
    frame = linear_explanations(unit[:, None], ProbingData.build(concepts, names))
    explanation = parse(frame.loc[0, "explanation"], "linear")
    assert explanation.concepts() == ("k4", "k17")
    centered = concepts[:, [4, 17]] - concepts[:, [4, 17]].mean(axis=0)
    oracle, _ = nnls(centered, unit - unit.mean())
    np.testing.assert_allclose([w for _, w in explanation.weights], oracle, atol=0.03)
    assert frame.loc[0, "val_correlation"] > 0.99
    short = linear_explanations(unit[:, None], ProbingData.build(concepts, names), LinearOptions(max_length=1))
    assert parse(short.loc[0, "explanation"], "linear").concepts() == ("k4",)


def test_linear_weights_are_never_negative() -> None:
    rng = np.random.default_rng(10)
    concepts = rng.random((1500, 12))
    unit = concepts[:, 0] - 2.0 * concepts[:, 1] + 0.1 * rng.standard_normal(1500)
    frame = linear_explanations(unit[:, None], ProbingData.build(concepts, [f"z{i}" for i in range(12)]))
    explanation = parse(frame.loc[0, "explanation"], "linear")
    assert explanation.concepts()[0] == "z0"
    assert all(weight >= 0 for _, weight in explanation.weights)


def test_caption_words_and_top_tokens_find_the_planted_word() -> None:
    rng = np.random.default_rng(11)
    animals = np.array(["zebra", "horse", "cat", "dog"])
    chosen = rng.integers(0, 4, 400)
    captions = [f"a photo of a {animals[i]} on grass" for i in chosen]
    unit = (chosen == 0) + 0.01 * rng.random(400)
    probing = ProbingData.build(np.zeros((400, 1)), ["none"], captions=captions, tokens=list(animals[chosen]))
    frame = caption_explanations(unit[:, None], probing, CaptionOptions(top_k=30, n_words=1))
    assert frame.loc[0, "explanation"] == "zebra"
    assert frame.loc[0, "lift"] > 3
    tokens = top_token_explanations(unit[:, None], probing)
    assert tokens.loc[0, "explanation"] == "zebra" and tokens.loc[0, "kind"] == "text"


def test_registry_runs_every_method_and_checks_params(binary_world, probing) -> None:
    concepts, _ = binary_world
    units = _planted_units(concepts, np.random.default_rng(12))
    captioned = ProbingData.build(concepts, probing.concept_names, captions=["x y"] * 2000, tokens=["t"] * 2000)
    for name, spec in METHODS.items():
        frame = explain(name, units, captioned, {}, unit_names=["a", "b", "c"])
        assert list(frame.columns[:4]) == ["unit", "explanation", "length", "kind"], name
        assert list(frame["unit"]) == ["a", "b", "c"], spec.summary
    with pytest.raises(OptionsError, match="'beam'"):
        explain("compexp", units, probing, {"beam": 3})
    with pytest.raises(OptionsError, match="quantile"):
        explain("netdissect", units, probing, {"quantile": 1.5})


@pytest.mark.parametrize("bad, message", [
    (np.full((2000, 1), np.nan), "finite"),
    (np.zeros((1999, 1)), "rows"),
    (np.zeros(2000), "2-D"),
])
def test_bad_activations_are_named(probing, bad, message) -> None:
    with pytest.raises(ValueError, match=message):
        linear_explanations(bad, probing)
    with pytest.raises(ValueError, match=message):
        compositional_explanations(bad, probing)


def test_spatial_methods_need_masks(probing) -> None:
    with pytest.raises(ValueError, match="masks"):
        network_dissection(np.zeros((2000, 1, 2, 2)), probing)


def test_spatial_compositional_finds_a_pixel_level_or() -> None:
    rng = np.random.default_rng(13)
    masks = rng.random((80, 6, 4, 4)) < 0.1
    union = masks[:, 1] | masks[:, 4]
    maps = (union + 0.01 * rng.random((80, 4, 4)))[:, None]
    probing = ProbingData.build(rng.random((80, 6)), [f"m{i}" for i in range(6)], masks=masks)
    frame = compositional_explanations(maps, probing, CompositionalOptions(quantile=float(union.mean()),
                                                                           max_length=2))
    assert frame.loc[0, "explanation"] in ("m1 OR m4", "m4 OR m1")
    assert frame.loc[0, "iou"] == pytest.approx(1.0)
