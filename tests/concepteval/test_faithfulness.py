"""Perturbations and faithfulness against closed forms: ABL removes a concept exactly, GRAD equals the
directional derivative by finite differences, Div equals scipy's KL, Eq. 1 is the plain mean."""

import numpy as np
import pytest
import torch
from scipy.special import softmax
from scipy.stats import entropy

from neuroneval.concepteval import (
    MEASURES,
    AblationOptions,
    FaithfulnessOptions,
    FunctionConcept,
    LinearConcept,
    ReluConcept,
    ablate,
    ascent_direction,
    faithfulness,
    position_differences,
    random_concepts,
    split_lm,
)
from neuroneval.concepteval.faithfulness import aggregate, kl_divergence, output_differences


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator per test, so a test's data do not depend on which tests ran before it (random order)."""
    return np.random.default_rng(0)


def test_abl_removes_an_affine_concept_exactly(rng):
    h = torch.as_tensor(rng.normal(size=(4, 5, 6)))
    concept = LinearConcept(rng.normal(size=6) * 3, 1.7, "affine")
    ablated = ablate(h, concept)
    assert torch.allclose(concept.activate(ablated), torch.zeros(4, 5, dtype=torch.float64), atol=1e-12)
    # the move is along v only (Lagrange condition, App. B Eq. 30): the closest point of the hyperplane
    residual = (ablated - h).reshape(-1, 6)
    v = torch.as_tensor(concept.v)
    assert torch.allclose(residual - (residual @ v)[:, None] * v / (v @ v), torch.zeros_like(residual), atol=1e-12)


def test_abl_of_relu_concept_keeps_inactive_positions(rng):
    h = torch.as_tensor(rng.normal(size=(50, 6)))
    concept = ReluConcept(rng.normal(size=6), -0.2, "sae")
    ablated = ablate(h, concept)
    inactive = concept.activate(h) == 0
    assert inactive.any() and (~inactive).any()
    assert torch.equal(ablated[inactive], h[inactive])
    assert torch.allclose(concept.activate(ablated), torch.zeros(50, dtype=torch.float64), atol=1e-12)


def test_numerical_ablation_matches_closed_forms(rng):
    h = torch.as_tensor(rng.normal(size=(7, 6)))
    v, b = rng.normal(size=6), 0.4
    affine = LinearConcept(v, b)
    as_function = FunctionConcept(lambda x: x @ torch.as_tensor(v) + b, "affine-fn")
    assert torch.allclose(ablate(h, as_function), ablate(h, affine), atol=1e-10)
    # a(h) = ‖h − c‖² − r²: the closest zero lies on the sphere, along the ray from c through h
    center, radius = torch.as_tensor(rng.normal(size=6)), 0.5
    sphere = FunctionConcept(lambda x: ((x - center) ** 2).sum(-1) - radius ** 2, "sphere")
    expected = center + radius * (h - center) / (h - center).norm(dim=-1, keepdim=True)
    assert torch.allclose(ablate(h, sphere, AblationOptions(max_iter=100, tol=1e-12)), expected, atol=1e-8)


def test_numerical_ablation_warns_when_it_cannot_converge():
    constant = FunctionConcept(lambda x: x.sum(-1) * 0 + 1.0, "constant")
    with pytest.warns(RuntimeWarning, match="still have"):
        ablate(torch.zeros(3, 4, dtype=torch.float64), constant, AblationOptions(max_iter=2))


def test_ascent_direction_is_the_unit_gradient(rng):
    h = torch.as_tensor(rng.normal(size=(10, 6)))
    concept = ReluConcept(rng.normal(size=6), 0.0)
    direction = ascent_direction(h, concept)
    active = concept.activate(h) > 0
    v = torch.as_tensor(concept.v / np.linalg.norm(concept.v))
    assert torch.allclose(direction[active], v.expand(int(active.sum()), 6))
    assert torch.equal(direction[~active], torch.zeros(int((~active).sum()), 6, dtype=torch.float64))


def test_split_reproduces_the_model(tiny_lm, windows):
    for site in ("resid", "mlp"):
        split = split_lm(tiny_lm, windows, layer=0, site=site)
        assert torch.allclose(split.head(split.hidden), tiny_lm(windows).logits, atol=1e-10)
        assert torch.equal(split.targets[:, :-1], windows[:, 1:]) and (split.targets[:, -1] == -1).all()


def test_grad_measures_equal_finite_differences(rng, tiny_lm, windows):
    split = split_lm(tiny_lm, windows, layer=0)
    concepts = [*random_concepts(16, 2, seed=1), ReluConcept(rng.normal(size=16), 0.1, "relu")]
    options = FaithfulnessOptions(measures=("GRAD-Loss", "GRAD-PClass", "GRAD-TClass"))
    rates = position_differences(split.hidden, split.head, split.targets, concepts, options)
    step = 1e-6
    valid = split.targets >= 0
    for index, concept in enumerate(concepts):
        u = ascent_direction(split.hidden, concept)
        with torch.no_grad():
            plus, minus = split.head(split.hidden + step * u), split.head(split.hidden - step * u)
            logits = split.head(split.hidden)
        target = split.targets.clamp_min(0)
        loss = {sign: output_differences(logits, perturbed, target)["Loss"] for sign, perturbed in
                (("+", plus), ("-", minus))}
        predicted = logits.argmax(-1, keepdim=True)
        expected = {
            "GRAD-Loss": (loss["+"] - loss["-"]) / (2 * step),
            "GRAD-PClass": ((plus - minus).gather(-1, predicted).squeeze(-1)) / (2 * step),
            "GRAD-TClass": ((plus - minus).gather(-1, target[..., None]).squeeze(-1)) / (2 * step),
        }
        for column, measure in enumerate(options.measures):
            np.testing.assert_allclose(rates[index, column][valid.numpy()], expected[measure][valid].numpy(),
                                       rtol=1e-5, atol=1e-7)


def test_abl_measures_by_hand(tiny_lm, windows):
    split = split_lm(tiny_lm, windows, layer=0)
    concept = random_concepts(16, 1, seed=4)[0]
    table = faithfulness(split.hidden, split.head, split.targets, [concept])
    assert list(table["measure"]) == list(MEASURES)
    with torch.no_grad():
        y = split.head(split.hidden).numpy()[:, :-1]
        y_prime = split.head(ablate(split.hidden, concept)).numpy()[:, :-1]
    target = windows[:, 1:].numpy()
    p, q = softmax(y, axis=-1), softmax(y_prime, axis=-1)
    pick = lambda a, j: np.take_along_axis(a, j[..., None], -1)[..., 0]  # noqa: E731
    predicted = y.argmax(-1)
    expected = {
        "ABL-Loss": (-np.log(pick(p, target)) + np.log(pick(q, target))).mean(),
        "ABL-Div": entropy(p.reshape(-1, p.shape[-1]), q.reshape(-1, q.shape[-1]), axis=1).mean(),
        "ABL-PClass": (pick(y_prime, predicted) - pick(y, predicted)).mean(),
        "ABL-TClass": (pick(y_prime, target) - pick(y, target)).mean(),
    }
    values = table.set_index("measure")["value"]
    for measure, value in expected.items():
        assert values[measure] == pytest.approx(value, rel=1e-8, abs=1e-12), measure
    assert (table["n_positions"] == target.size).all()


def test_kl_divergence_matches_scipy(rng):
    logits_p, logits_q = rng.normal(size=(5, 9)), rng.normal(size=(5, 9))
    ours = kl_divergence(torch.as_tensor(logits_p), torch.as_tensor(logits_q)).numpy()
    np.testing.assert_allclose(ours, entropy(softmax(logits_p, 1), softmax(logits_q, 1), axis=1), rtol=1e-10)


def test_aggregation_uniform_and_activation_weighted():
    differences = np.array([[[[1.0, 3.0, np.nan]]]])  # (C=1, M=1, B=1, L=3)
    assert aggregate(differences)[0, 0] == pytest.approx(2.0)
    activations = np.array([[[3.0], [1.0], [5.0]]])  # (B, L, C); NaN position and negatives carry no weight
    assert aggregate(differences, activations, weighting="activation")[0, 0] == pytest.approx(1.5)


def test_concept_batches_do_not_change_results(tiny_lm, windows):
    split = split_lm(tiny_lm, windows, layer=0)
    concepts = random_concepts(16, 3, seed=2)
    one = faithfulness(split.hidden, split.head, split.targets, concepts, FaithfulnessOptions(concept_batch=1))
    three = faithfulness(split.hidden, split.head, split.targets, concepts, FaithfulnessOptions(concept_batch=3))
    np.testing.assert_allclose(one["value"], three["value"], rtol=1e-9, atol=1e-12)


def test_bad_inputs_and_options_are_named(tiny_lm, windows):
    split = split_lm(tiny_lm, windows, layer=0)
    concept = random_concepts(16, 1, seed=0)
    bad = split.hidden.clone()
    bad[0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        faithfulness(bad, split.head, split.targets, concept)
    with pytest.raises(ValueError, match="targets must have shape"):
        faithfulness(split.hidden, split.head, split.targets[:, :-1], concept)
    with pytest.raises(ValueError, match="no concepts"):
        faithfulness(split.hidden, split.head, split.targets, [])
    with pytest.raises(ValueError, match="'weighing'"):
        FaithfulnessOptions.from_params({"weighing": "uniform"})
    with pytest.raises(ValueError, match="measures"):
        FaithfulnessOptions.from_params({"measures": ["GRAD-Div"]})
    with pytest.raises(ValueError, match=r"AblationOptions\.tol"):
        FaithfulnessOptions.from_params({"ablation": {"tol": 0}})
    with pytest.raises(ValueError, match="all zeros"):
        LinearConcept(np.zeros(3))
    with pytest.raises(ValueError, match="layer 5 out of range"):
        split_lm(tiny_lm, windows, layer=5)
