"""Concept labels, class prior, hierarchy, masks and captions of the vision world."""

import numpy as np
import pytest

from neuroneval.worlds import build_vision_world, concept_mask
from neuroneval.worlds.render import COLOURS, SCENES, SHAPES, TEXTURES
from neuroneval.worlds.vision_concepts import SCENE_PHRASES, SIZE_WORDS, class_prior


def rates_by_prefix(world):
    rates = world.labels.drop(columns="input_id").mean()
    return {prefix: rates[[name for name in rates.index if name.startswith(prefix)]]
            for prefix in ("class:", "parent:", "shape:", "colour:", "texture:", "size:", "scene:", "distractors:")}


def test_default_positive_rates_at_20000(large_world):
    rates = rates_by_prefix(large_world)
    assert len(rates["class:"]) == 120
    assert rates["class:"].min() >= 0.0003
    assert rates["class:"].max() <= 0.016
    assert 0.0005 <= rates["class:"].median() <= 0.013
    assert rates["parent:"].min() >= 0.05
    assert rates["parent:"].max() <= 0.30
    for prefix in ("shape:", "colour:", "texture:", "scene:", "distractors:"):
        assert (rates[prefix] > 0.02).all(), prefix
    every = large_world.labels.drop(columns="input_id").mean()
    assert every.min() <= 0.001
    assert every.max() >= 0.20


def test_class_prior_spans_its_ratio():
    prior = class_prior(120, ratio=15.0, power=3.0)
    assert prior.sum() == pytest.approx(1.0)
    assert prior[0] / prior[-1] == pytest.approx(15.0)
    assert np.all(np.diff(prior) <= 0)
    assert 0.012 < prior[0] < 0.015
    assert 0.0008 < prior[-1] < 0.001


def test_labels_are_one_hot_classes_matching_class_index(small_world):
    classes = small_world.labels[small_world.class_names].to_numpy()
    assert classes.dtype == np.float32
    assert np.array_equal(classes.sum(axis=1), np.ones(len(classes)))
    assert np.array_equal(classes.argmax(axis=1), small_world.class_index)
    assert np.array_equal(small_world.labels["input_id"].to_numpy(), np.arange(len(classes)))
    values = small_world.labels.drop(columns="input_id").to_numpy()
    assert set(np.unique(values)) <= {0.0, 1.0}


def test_parent_label_is_exactly_the_or_of_its_children(large_world):
    hierarchy = large_world.hierarchy
    assert len(hierarchy) == 16
    covered = set()
    for parent, children in hierarchy.items():
        assert parent.startswith("parent:")
        assert set(children) <= set(large_world.class_names)
        union = large_world.labels[children].to_numpy().max(axis=1)
        assert np.array_equal(large_world.labels[parent].to_numpy(), union)
        covered |= set(children)
    assert covered == set(large_world.class_names)


def test_class_names_agree_with_attributes(small_world):
    attributes = small_world.attributes
    for row in attributes.head(50).itertuples():
        assert small_world.class_names[row.class_index] == f"class:{row.colour}_{row.texture}_{row.shape}"
        assert small_world.labels.loc[row.Index, f"shape:{row.shape}"] == 1.0
        assert small_world.labels.loc[row.Index, f"colour:{row.colour}"] == 1.0
        assert small_world.labels.loc[row.Index, f"texture:{row.texture}"] == 1.0
        assert small_world.labels.loc[row.Index, f"scene:{row.scene}"] == 1.0
        assert small_world.labels.loc[row.Index, f"size:{row.size}"] == 1.0
    assert set(attributes["shape"]) <= set(SHAPES)
    assert set(attributes["texture"]) <= set(TEXTURES)
    assert set(attributes["colour"]) <= set(COLOURS)


def test_masks_follow_attributes(large_world):
    masks = large_world.masks
    attributes = large_world.attributes
    main_pixels = (masks == 1).sum(axis=(1, 2))
    assert main_pixels.min() > 0
    large = attributes["size"].to_numpy() == "large"
    assert main_pixels[large].mean() > 2 * main_pixels[~large].mean()
    for slot in (1, 2):
        drawn = (masks == slot + 1).any(axis=(1, 2))
        assert np.array_equal(drawn, attributes[f"distractor{slot}_shape"].to_numpy() != "")
    assert np.array_equal(((masks >= 2).any(axis=(1, 2))), attributes["n_distractors"].to_numpy() > 0)
    counts = large_world.labels[["distractors:1", "distractors:2"]].to_numpy()
    assert np.array_equal(counts @ np.array([1, 2]), attributes["n_distractors"].to_numpy())


def test_main_object_pixels_carry_its_colour(small_world):
    for index in range(40):
        row = small_world.attributes.iloc[index]
        if row["texture"] != "solid":
            continue
        pixels = small_world.images[index][small_world.masks[index] == 1].astype(float)
        assert np.abs(np.median(pixels, axis=0) - np.array(COLOURS[row["colour"]])).max() < 45


def test_concept_masks(small_world):
    red = concept_mask(small_world, "colour:red")
    assert red.shape == small_world.masks.shape
    assert np.array_equal(red.any(axis=(1, 2)), small_world.labels["colour:red"].to_numpy() > 0)
    scene = concept_mask(small_world, "scene:grass")
    assert not (scene & (small_world.masks > 0)).any()
    leaf = small_world.class_names[int(small_world.class_index[0])]
    assert np.array_equal(concept_mask(small_world, leaf)[0], small_world.masks[0] == 1)
    with pytest.raises(ValueError, match="concept"):
        concept_mask(small_world, "colour:mauve")


def test_captions_mention_the_attributes(small_world):
    assert len(small_world.captions) == len(small_world.images)
    assert len(set(small_world.captions)) > len(small_world.captions) // 2
    for caption, row in zip(small_world.captions, small_world.attributes.itertuples(), strict=True):
        words = caption.split()
        assert row.colour in words and row.shape in words
        assert any(word in words for word in SIZE_WORDS[row.size == "large"])
        assert any(phrase in caption for phrase in SCENE_PHRASES[row.scene])
        for slot in (1, 2):
            colour = getattr(row, f"distractor{slot}_colour")
            if colour:
                assert f"small {colour} " in caption
    templates = {caption.startswith("a photo") for caption in small_world.captions}
    assert templates == {True, False}


def test_small_catalogues_and_knobs():
    world = build_vision_world(200, seed=0, split="probe", n_classes=6, n_shapes=3, n_colours=2, n_textures=1,
                               n_scenes=2, max_distractors=0, parent_groupings=("texture",),
                               scene_weights=(3.0, 1.0), image_size=24)
    assert world.images.shape == (200, 24, 24, 3)
    assert len(world.class_names) == 6
    assert list(world.hierarchy) == ["parent:solid"]
    assert (world.masks <= 1).all()
    assert set(world.attributes["scene"]) <= set(SCENES[:2])
    assert world.labels["scene:sky"].mean() > world.labels["scene:grass"].mean()


def test_parents_have_at_least_two_children():
    world = build_vision_world(50, seed=0, split="probe", n_classes=8)
    assert world.hierarchy
    assert all(len(children) >= 2 for children in world.hierarchy.values())
    parents = [column for column in world.labels.columns if column.startswith("parent:")]
    assert parents == list(world.hierarchy)


def test_every_label_concept_has_a_prompt_in_the_caption_vocabulary() -> None:
    from neuroneval.worlds import build_vision_world
    from neuroneval.worlds.vision_concepts import concept_prompt

    world = build_vision_world(300, seed=0, split="probe", n_classes=40)
    caption_words = {word.strip(",") for caption in world.captions for word in caption.split()}
    for concept in world.labels.columns[1:]:
        prompt = concept_prompt(concept)
        assert set(prompt.split()) <= caption_words | {"a", "an"}, (concept, prompt)
    assert concept_prompt("class:orange_striped_circle") == "an orange striped circle"
    with pytest.raises(ValueError, match="no prompt for concept 'weather:rain'"):
        concept_prompt("weather:rain")
