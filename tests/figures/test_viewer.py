"""The neuron viewer's data assembly on small synthetic inputs, and its page."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from neuroneval.figures.viewer import (
    Card,
    InputView,
    assemble_cards,
    explanations_by_unit,
    id_renderer,
    image_renderer,
    media_renderer,
    passing_metrics,
    png_base64,
    render_page,
    token_renderer,
    top_inputs,
    truth_by_unit,
    world_directory,
)


def _synthetic(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    concepts = (rng.random((40, 3)) < 0.3).astype(np.float32)
    activations = np.column_stack([concepts[:, 0] + 0.1 * rng.random(40), rng.random(40),
                                   concepts[:, 2] * 2.0]).astype(np.float32)
    return activations, concepts


def test_top_inputs_are_the_largest_first_with_ties_to_the_earlier_row() -> None:
    assert top_inputs(np.array([0.1, 0.9, 0.5, 0.9, np.nan]), 3).tolist() == [1, 3, 2]
    assert top_inputs(np.array([1.0, 2.0]), 5).tolist() == [1, 0]
    assert top_inputs(np.array([1.0, 2.0]), 0).tolist() == []


def test_truth_and_explanations_group_by_unit() -> None:
    truth = pd.DataFrame({"unit": ["0", "0", "2"], "concept": ["a", "b", "c"]})
    assert truth_by_unit(truth) == {"0": ["a", "b"], "2": ["c"]}
    tables = {"netdissect": pd.DataFrame({"unit": ["0", "2"], "explanation": ["a", "c OR b"]}),
              "truth": pd.DataFrame({"unit": ["0"], "explanation": ["a"]})}
    assert explanations_by_unit(tables) == {"0": [("netdissect", "a"), ("truth", "a")], "2": [("netdissect", "c OR b")]}


def test_passing_metrics_reads_table3() -> None:
    table3 = pd.DataFrame({"metric": ["recall", "correlation", "cosine"], "pass": [False, True, "True"]})
    assert passing_metrics(table3) == ["correlation", "cosine"]


def test_assemble_cards_scores_each_unit_for_its_first_known_concept() -> None:
    from neuroneval.metrics import score

    activations, concepts = _synthetic()
    truth = pd.DataFrame({"unit": ["u2", "u0", "u0", "missing"], "concept": ["c2", "c0", "c1", "c0"]})
    explanations = {"netdissect": pd.DataFrame({"unit": ["u0"], "explanation": ["c0"]})}
    cards = assemble_cards(activations, ["u0", "u1", "u2"], concepts, ["c0", "c1", "c2"], truth,
                           render=id_renderer(np.arange(100, 140)), metrics=["correlation", "iou"], top_k=4,
                           explanations=explanations)
    assert [card.unit for card in cards] == ["u2", "u0"]  # truth order; units the setting lacks are left out
    assert cards[1].concepts == ("c0", "c1")
    assert cards[1].explanations == (("netdissect", "c0"),) and cards[0].explanations == ()
    full = {metric: score(metric, activations, concepts) for metric in ("correlation", "iou")}
    for card, (unit, concept) in zip(cards, ((2, 2), (0, 0)), strict=True):
        for metric in ("correlation", "iou"):
            assert card.scores[metric] == pytest.approx(full[metric][unit, concept])
        rows = top_inputs(activations[:, unit], 4)
        assert [view.input_id for view in card.inputs] == (rows + 100).tolist()
        assert [view.activation for view in card.inputs] == pytest.approx(activations[rows, unit].tolist())
    assert len(assemble_cards(activations, ["u0", "u1", "u2"], concepts, ["c0", "c1", "c2"], truth,
                              render=id_renderer(np.arange(40)), metrics=[], top_k=1, max_units=1)) == 1


def test_a_unit_whose_concepts_the_table_lacks_gets_nan_scores() -> None:
    activations, concepts = _synthetic()
    truth = pd.DataFrame({"unit": ["u0"], "concept": ["elsewhere"]})
    (card,) = assemble_cards(activations, ["u0", "u1", "u2"], concepts, ["c0", "c1", "c2"], truth,
                             render=id_renderer(np.arange(40)), metrics=["correlation"], top_k=2)
    assert np.isnan(card.scores["correlation"])


def test_renderers_show_images_and_tokens() -> None:
    images = np.zeros((3, 4, 5, 3), dtype=np.uint8)
    images[2, 1, 1] = 255
    view = image_renderer(images, np.array([2, 0]), scale=3)(0, 0.5)
    assert (view.kind, view.input_id, view.width, view.height) == ("image", 2, 15, 12)
    assert view.image == png_base64(images[2])  # deterministic bytes
    vocabulary = ["<eos>", "<unk>", "the", "cat", "sat", "down"]
    tokens = np.array([2, 3, 4, 0, 2, 3, 4, 5, 0])
    offsets = np.array([0, 4, 9])
    render = token_renderer(tokens, offsets, vocabulary, np.array([6, 1]), context=3)
    late, early = render(0, 1.0), render(1, 2.0)
    assert late.tokens == ("the", "cat", "sat") and late.highlight == 2 and late.next_token == "down"
    assert early.tokens == ("the", "cat") and early.next_token == "sat"  # the window stops at the document start
    assert world_directory("vision_probe").as_posix() == "data/worlds/vision/probe"


def test_page_is_self_contained_and_escapes_text() -> None:
    cards = assemble_cards(*_synthetic()[:1], ["u0", "u1", "u2"], _synthetic()[1], ["c0", "c1", "c2"],
                           pd.DataFrame({"unit": ["u0", "u1"], "concept": ["c0", "c1"]}),
                           render=lambda row, activation: InputView(row, activation, "tokens", tokens=("<b>", "x"),
                                                                    highlight=1, next_token="y"),
                           metrics=["cosine"], top_k=2,
                           explanations={"m": pd.DataFrame({"unit": ["u0"], "explanation": ["<script>"]})})
    page = render_page("setting<1>", cards, metrics=["cosine"])
    assert page.count('<tr class="card"') == 2
    assert page.count("<script>") == 1 and "&lt;script&gt;" in page  # the one script is the page's own
    assert "&lt;b&gt;" in page and "<mark>x</mark>" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)


def test_the_users_digits_are_shown_by_input_id_not_by_row(tmp_path) -> None:
    """Top inputs of a unit on sklearn's digits, stored in another order than the activation table: each thumbnail
    decodes to the digits row of its input id."""
    import base64
    import io as bytes_io

    from PIL import Image
    from sklearn.datasets import load_digits

    from neuroneval.input_media import read_image_array, read_text_table

    digits = load_digits()
    n = 300
    ids = 500 + 2 * np.arange(n)
    rng = np.random.default_rng(3)
    order = rng.permutation(n)
    np.save(tmp_path / "digits.npy", digits.images[:n][order])
    media = read_image_array(tmp_path / "digits.npy", ids=ids[order])
    concepts = np.column_stack([digits.target[:n] == d for d in range(10)]).astype(np.float32)
    activations = (concepts[:, [5, 7]] + 0.2 * rng.random((n, 2))).astype(np.float32)
    truth = pd.DataFrame({"unit": ["u5", "u7"], "concept": ["class:5", "class:7"]})

    cards = assemble_cards(activations, ["u5", "u7"], concepts, [f"class:{d}" for d in range(10)], truth,
                           render=media_renderer(media, ids, scale=4), metrics=["correlation"], top_k=6)
    page = render_page("digits", cards, metrics=["correlation"])
    shown = re.findall(r'data-input="(\d+)"><img alt="input \1" width="32" height="32" src="data:image/png;base64,'
                       r'([^"]+)"', page)
    assert len(shown) == 12
    row_of = {int(i): r for r, i in enumerate(ids)}
    for input_id, encoded in shown:
        decoded = np.asarray(Image.open(bytes_io.BytesIO(base64.b64decode(encoded))))
        np.testing.assert_array_equal(decoded, np.rint(digits.images[row_of[int(input_id)]] / 16 * 255))
    assert {digits.target[row_of[int(i)]] for i, _ in shown[:6]} == {5}
    with pytest.raises(ValueError, match=r"no image for 1 of the 1 requested input id\(s\), e.g. \[9\]"):
        media_renderer(media, np.array([9]))(0, 1.0)
    pd.DataFrame({"input_id": [4], "document": [0], "position": [3], "token": [" sat"],
                  "context": ["the cat"]}).to_csv(tmp_path / "tokens.csv", index=False)
    view = media_renderer(read_text_table(tmp_path / "tokens.csv"), np.array([4]))(0, 2.0)
    assert (view.kind, view.tokens, view.highlight) == ("text", ("the cat", " sat"), 1)
    assert 'data-input="4" title="input 4, activation 2">the cat<mark> sat</mark>' in render_page(
        "text", [Card(unit="u", concepts=("c",), inputs=(view,))], metrics=[])
