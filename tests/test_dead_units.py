"""Dead units of a small MLP on sklearn's digits (issue 30, item 4): flagged in every output, never ranked first.

The MLP (64 → 58 ReLU → 10) is trained for a few seconds on 1078 digits and probed on the other 719; five hidden
units are killed (zero weights, bias −1: constant 0) and one is made near-dead (active on 3 probe inputs). Training
also leaves some units dead on its own, as the user's did; the expected flags come from ``np.ptp`` and a count of
active inputs, not from the library.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.cli import main
from neuroneval.metrics import score
from neuroneval.metrics.unit_checks import DegenerateUnitWarning, SmallProbeSetWarning, degenerate_units
from neuroneval.settings import SettingData, iou_truth

DEAD = (3, 11, 20, 41, 57)
NEAR_DEAD = 30
N_HIDDEN = 58
LARGE = "large:3-9"  # digits 3–9: positive rate ≈ 0.7, the IoU a constant unit gets with it


@pytest.fixture(scope="module")
def digits_mlp() -> SettingData:
    torch = pytest.importorskip("torch")
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(labels))
    train, probe = order[:1078], order[1078:]
    inputs = torch.tensor(images / 16.0, dtype=torch.float32)
    targets = torch.tensor(labels)
    torch.manual_seed(0)
    hidden, head = torch.nn.Linear(64, N_HIDDEN), torch.nn.Linear(N_HIDDEN, 10)
    optimizer = torch.optim.Adam([*hidden.parameters(), *head.parameters()], lr=0.01)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a few seconds on a shared machine
    try:
        for _ in range(100):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(head(torch.relu(hidden(inputs[train]))), targets[train])
            loss.backward()
            optimizer.step()
    finally:
        torch.set_num_threads(threads)
    with torch.no_grad():
        for unit in DEAD:
            hidden.weight[unit] = 0.0
            hidden.bias[unit] = -1.0
        pre = hidden(inputs[probe])[:, NEAR_DEAD].sort(descending=True).values
        hidden.bias[NEAR_DEAD] -= (pre[2] + pre[3]) / 2  # only the 3 largest stay positive
        activations = torch.relu(hidden(inputs[probe])).numpy().astype(np.float32)
    probe_labels = labels[probe]
    names = [f"class:{digit}" for digit in range(10)] + [LARGE]
    concepts = np.column_stack([probe_labels == digit for digit in range(10)] + [probe_labels >= 3])
    return SettingData(activations=activations, unit_names=[f"h{k}" for k in range(N_HIDDEN)],
                       concepts=concepts.astype(np.float32), concept_names=names, unit_concepts={})


@pytest.fixture(scope="module")
def tables(digits_mlp: SettingData, tmp_path_factory) -> tuple[Path, Path]:
    directory = tmp_path_factory.mktemp("digits_mlp")
    ids = np.arange(digits_mlp.activations.shape[0])
    activations = pd.DataFrame(digits_mlp.activations, columns=digits_mlp.unit_names).assign(input_id=ids)
    concepts = pd.DataFrame(digits_mlp.concepts, columns=digits_mlp.concept_names).assign(input_id=ids)
    return (io.write_activation_table(directory / "hidden.parquet", activations[["input_id", *digits_mlp.unit_names]],
                                      metadata={"model": "mlp", "layer": "hidden"}),
            io.write_concept_table(directory / "labels.parquet", concepts[["input_id", *digits_mlp.concept_names]],
                                   metadata={"source": "labels"}))


def _constant(data: SettingData) -> list[str]:
    """Units whose activations have zero peak-to-peak range, in column order."""
    return [name for name, spread in zip(data.unit_names, np.ptp(data.activations, axis=0), strict=True)
            if spread == 0]


def _near_dead(data: SettingData) -> list[str]:
    """ReLU units active (> 0) on 1–4 inputs, in column order."""
    active = np.count_nonzero(data.activations > 0, axis=0)
    return [name for name, count in zip(data.unit_names, active, strict=True) if 0 < count < 5]


def _expected_degenerate(data: SettingData) -> set[str]:
    return {*_constant(data), *_near_dead(data)}


def _named(data: SettingData) -> str:
    """The start of the warning that names the degenerate units (first five of each kind + count)."""
    constant, near = _constant(data), _near_dead(data)
    more = f" and {len(constant) - 5} more" if len(constant) > 5 else ""
    return (rf"{len(constant)} constant unit\(s\) \({', '.join(constant[:5])}{more}\) and {len(near)} near-dead "
            rf"unit\(s\) varying on fewer than 5 inputs \({', '.join(near[:5])}\)")


def test_the_setup_has_the_dead_units_it_claims(digits_mlp: SettingData) -> None:
    assert digits_mlp.activations.shape == (719, N_HIDDEN)
    assert {f"h{k}" for k in DEAD} <= set(_constant(digits_mlp))
    assert _near_dead(digits_mlp) == [f"h{NEAR_DEAD}"]
    units = degenerate_units(digits_mlp.activations, digits_mlp.unit_names)
    assert units.names("constant") == _constant(digits_mlp)
    assert units.names("near_dead") == _near_dead(digits_mlp)


def test_a_constant_unit_would_win_iou_with_the_positive_rate(digits_mlp: SettingData) -> None:
    large = digits_mlp.concept_names.index(LARGE)
    positive_rate = digits_mlp.concepts[:, large].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iou = score("iou", digits_mlp.activations, digits_mlp.concepts, alpha=0.05)
    np.testing.assert_allclose(iou[list(DEAD), large], positive_rate, rtol=1e-6)
    assert positive_rate > 0.6
    # unflagged, a dead unit is the best-explained one
    assert digits_mlp.unit_names[iou[:, large].argmax()] in _expected_degenerate(digits_mlp)


def test_score_cli_flags_the_dead_units_and_warns_by_name(digits_mlp, tables, tmp_path: Path) -> None:
    activation_path, concept_path = tables
    out = tmp_path / "iou.csv"
    with pytest.warns(DegenerateUnitWarning, match=_named(digits_mlp)) as caught:
        assert main(["score", "--metric", "iou", "--alpha", "0.05", "--activations", str(activation_path),
                     "--concepts", str(concept_path), "--out", str(out)]) == 0
    assert not [w for w in caught if issubclass(w.category, SmallProbeSetWarning)]  # 0.05 · 719 ≈ 36 inputs
    written = pd.read_csv(out)
    flagged = set(written.loc[written["degenerate"], "unit"])
    assert flagged == _expected_degenerate(digits_mlp)
    assert written.groupby("unit")["degenerate"].nunique().max() == 1
    best = written[written["concept"] == LARGE].sort_values("score", ascending=False)
    assert best.iloc[0]["degenerate"]  # the scores stay the metric's; the flag is what keeps it off the top


def test_score_cli_warns_when_alpha_selects_a_handful_of_inputs(tables, tmp_path: Path) -> None:
    activation_path, concept_path = tables
    with pytest.warns(SmallProbeSetWarning, match=r"alpha = 0.005 → 3.6 of n = 719 inputs, fewer than 10"):
        assert main(["score", "--metric", "iou", "--alpha", "0.005", "--activations", str(activation_path),
                     "--concepts", str(concept_path), "--out", str(tmp_path / "small.csv")]) == 0


@pytest.mark.parametrize(("method", "options", "score_column"), [
    ("netdissect", ["quantile=0.05"], "iou"),
    ("compexp", ["quantile=0.05", "max_length=2", "beam_size=3"], "iou"),
])
def test_explain_cli_gives_dead_units_no_confident_explanation(digits_mlp, tables, tmp_path: Path, method: str,
                                                               options: list[str], score_column: str) -> None:
    from neuroneval.explain import read_explanations

    activation_path, concept_path = tables
    out = tmp_path / f"{method}.csv"
    with pytest.warns(DegenerateUnitWarning, match=_named(digits_mlp) + ".*scores set to NaN"):
        assert main(["explain", "--method", method, *[f"--option={text}" for text in options],
                     "--activations", str(activation_path), "--concepts", str(concept_path), "--out", str(out)]) == 0
    frame = read_explanations(out)
    expected = _expected_degenerate(digits_mlp)
    assert set(frame.loc[frame["degenerate"], "unit"]) == expected
    assert frame.loc[frame["degenerate"], score_column].isna().all()
    assert frame.loc[~frame["degenerate"], score_column].notna().all()
    ranked = frame.sort_values(score_column, ascending=False)  # NaN last: pandas' default
    assert not set(ranked["unit"].iloc[:N_HIDDEN - len(expected)]) & expected


def test_explain_cli_warns_on_the_imagenet_quantile(tables, tmp_path: Path) -> None:
    activation_path, concept_path = tables
    with pytest.warns(SmallProbeSetWarning, match=r"explain netdissect: quantile = 0.005 → 3.6 of n = 719"):
        main(["explain", "--method", "netdissect", "--activations", str(activation_path), "--concepts",
              str(concept_path), "--out", str(tmp_path / "nd.csv")])


def test_validate_cli_lists_the_dead_units(digits_mlp, tables, capsys) -> None:
    activation_path, _ = tables
    assert main(["validate", str(activation_path), "--kind", "activation"]) == 0
    out = capsys.readouterr().out
    for unit in _constant(digits_mlp):
        assert f"  {unit}: constant (varies on 0 of 719 inputs)" in out
    assert f"  h{NEAR_DEAD}: near_dead (varies on 3 of 719 inputs)" in out
    assert out.count(": constant (") == len(_constant(digits_mlp))


def test_iou_truth_gives_dead_units_no_concept(digits_mlp: SettingData) -> None:
    with pytest.warns(DegenerateUnitWarning, match=_named(digits_mlp) + ".*no IoU truth concept"):
        truth = iou_truth(digits_mlp, alpha=0.05)
    assert not set(truth) & _expected_degenerate(digits_mlp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        iou = score("iou", digits_mlp.activations, digits_mlp.concepts, alpha=0.05)
    expected = {unit: [digits_mlp.concept_names[iou[row].argmax()]] for row, unit in enumerate(digits_mlp.unit_names)
                if iou[row].max() > 0 and unit not in _expected_degenerate(digits_mlp)}
    assert truth == expected


def test_meta_evaluation_leaves_dead_units_out_and_warns_on_small_alpha(digits_mlp: SettingData) -> None:
    from neuroneval.meta import MetaOptions, evaluate_setting
    from neuroneval.settings import truth_frame

    with pytest.warns(DegenerateUnitWarning):
        truth = truth_frame(iou_truth(digits_mlp, alpha=0.05, prefixes=["class:"]))
    options = MetaOptions(metrics=("iou", "correlation"), alpha_grid=(0.005, 0.05), lam_grid=(0.0,), n_boot=20)
    with pytest.warns(SmallProbeSetWarning, match=r"meta digits_mlp: alpha = 0.005 → 3.6 of n = 719"):
        table = evaluate_setting(digits_mlp, truth, options, setting="digits_mlp", progress=False)
    known = truth["unit"].nunique()
    assert not set(truth["unit"]) & _expected_degenerate(digits_mlp)
    assert (table["val_units"] + table["test_units"] == known).all()
    assert (table["val_units"] == 10).all()  # MetaOptions' default min_val_units, as params.yaml
    assert table["ci_low"].notna().all()


def test_viewer_badges_dead_units_and_sorts_them_last(digits_mlp: SettingData) -> None:
    from neuroneval.figures.viewer import assemble_cards, id_renderer, render_page

    alive = [unit for unit in digits_mlp.unit_names if unit not in _expected_degenerate(digits_mlp)][:2]
    dead = [f"h{DEAD[0]}", f"h{NEAR_DEAD}", f"h{DEAD[1]}"]
    units = [dead[0], alive[0], dead[1], alive[1], dead[2]]
    truth = pd.DataFrame({"unit": units, "concept": [LARGE, "class:0", "class:1", "class:2", LARGE]})
    cards = assemble_cards(digits_mlp.activations, digits_mlp.unit_names, digits_mlp.concepts,
                           digits_mlp.concept_names, truth, render=id_renderer(np.arange(719)), metrics=["iou"],
                           top_k=3)
    assert [card.unit for card in cards] == [*alive, *dead]
    assert [card.status for card in cards] == ["ok", "ok", "constant", "near_dead", "constant"]
    page = render_page("digits_mlp", cards, metrics=["iou"])
    assert page.count('class="card degenerate"') == 3
    assert page.count('<span class="badge"') == 3
    assert "3 constant or near-dead unit(s) badged and sorted last" in page


def test_sanity_units_of_an_iou_truth_setting_are_never_dead(digits_mlp: SettingData) -> None:
    from neuroneval.meta import MetaOptions, truth_mask, validation_split
    from neuroneval.sanity.experimental import experimental_test
    from neuroneval.settings import truth_frame

    with pytest.warns(DegenerateUnitWarning):
        truth = truth_mask(truth_frame(iou_truth(digits_mlp, alpha=0.05, prefixes=["class:"])),
                           digits_mlp.unit_names, digits_mlp.concept_names)
    val_units, test_units = validation_split(truth, MetaOptions())  # as pipeline.sanity_steps splits them
    tested = {digits_mlp.unit_names[k] for k in (*val_units, *test_units)}
    assert not tested & _expected_degenerate(digits_mlp)
    pairs = np.argwhere(truth[test_units])
    pairs[:, 0] = test_units[pairs[:, 0]]
    table = experimental_test("correlation", digits_mlp.activations, digits_mlp.concepts, pairs, seed=0)
    assert set(table["test"]) == {"missing", "extra"} and (table["n_pairs"] == len(pairs)).all()
