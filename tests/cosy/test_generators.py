"""Generators: templates, per-image seeds, the oracle renderer, and the request checks every backend shares."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from neuroneval.cosy import TEMPLATES, ImageGenerator, OracleGenerator, config_hash, fill_template, image_seed
from neuroneval.cosy.generators import build_generator
from neuroneval.cosy.options import DiffusersOptions
from neuroneval.cosy.prompts import strip_template
from neuroneval.worlds import build_vision_world
from neuroneval.worlds.render import COLOURS


@pytest.fixture(scope="module")
def oracle() -> OracleGenerator:
    world = build_vision_world(4, seed=0, split="probe", n_classes=16)
    return OracleGenerator(world.params)


def test_five_templates_of_the_paper() -> None:
    assert len(TEMPLATES) == 5
    assert fill_template("closeup", "a red striped circle") == "realistic photo of a close up of a red striped circle"
    assert fill_template("photo of {concept}", "x") == "photo of x"
    for template in TEMPLATES:
        assert strip_template(fill_template(template, "a blue dotted star")) == "a blue dotted star"
    with pytest.raises(ValueError, match="unknown prompt template"):
        fill_template("nonsense", "x")
    with pytest.raises(ValueError, match="empty explanation"):
        fill_template("closeup", "  ")


def test_image_seed_is_a_stable_hash() -> None:
    # sha256("0\x1fa red circle\x1f0")[:8] as a big-endian integer mod 2**63: fixed across runs and machines
    seed = image_seed("a red circle", 0)
    assert seed == int.from_bytes(hashlib.sha256(b"0\x1fa red circle\x1f0").digest()[:8], "big") % 2**63
    assert seed == 6768227613980130280
    assert 0 <= seed < 2**63
    assert len({image_seed("a red circle", index) for index in range(50)}) == 50
    assert image_seed("a red circle", 0, generation_seed=1) != seed
    assert config_hash({"a": 1, "b": [2]}) == config_hash({"b": [2], "a": 1})
    with pytest.raises(ValueError, match="index"):
        image_seed("x", -1)


def test_oracle_follows_the_contract(oracle: OracleGenerator) -> None:
    assert isinstance(oracle, ImageGenerator)
    prompts = [fill_template("closeup", text) for text in ("a red striped circle", "a square", "on grass", "a large")]
    seeds = [image_seed(prompt, 0) for prompt in prompts]
    images = oracle.generate(prompts, seeds)
    assert images.shape == (4, 32, 32, 3) and images.dtype == np.uint8
    # image j depends only on (prompt j, seed j): reversed order and one-at-a-time give the same bytes
    reversed_images = oracle.generate(prompts[::-1], seeds[::-1])[::-1]
    single = np.stack([oracle.generate([prompt], [seed])[0] for prompt, seed in zip(prompts, seeds, strict=True)])
    assert np.array_equal(images, reversed_images) and np.array_equal(images, single)
    assert not np.array_equal(oracle.generate(prompts[:1], [seeds[0] + 1])[0], images[0])


def test_oracle_renders_the_named_colour(oracle: OracleGenerator) -> None:
    seeds = list(range(40))
    for colour in ("red", "blue"):
        images = oracle.generate([f"a large {colour} solid square"] * len(seeds), seeds).reshape(-1, 3)
        target = np.array(COLOURS[colour], dtype=float)
        close = np.linalg.norm(images.astype(float) - target, axis=1) < 60
        other = np.array(COLOURS["blue" if colour == "red" else "red"], dtype=float)
        far = np.linalg.norm(images.astype(float) - other, axis=1) < 60
        assert close.mean() > 0.15 and close.mean() > 3 * far.mean()


def test_oracle_rejects_what_it_cannot_render(oracle: OracleGenerator) -> None:
    with pytest.raises(ValueError, match="'realistic photo of a close up of a dog'"):
        oracle.generate(["realistic photo of a close up of a dog"], [0])
    with pytest.raises(ValueError, match="cannot render"):
        oracle.generate(["a circle red"], [0])


@pytest.mark.parametrize(("prompts", "seeds", "message"), [
    ([], [], "at least one prompt"),
    (["a circle"], [1, 2], "1 prompts but 2 seeds"),
    (["a circle", " "], [1, 2], "empty"),
    (["a circle"], [-1], "seeds must be"),
])
def test_request_checks(oracle: OracleGenerator, prompts: list, seeds: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        oracle.generate(prompts, seeds)


def test_build_generator_errors() -> None:
    with pytest.raises(ValueError, match="unknown generator"):
        build_generator("midjourney")
    with pytest.raises(ValueError, match="world's params"):
        build_generator("oracle")
    with pytest.raises(ValueError, match=r"cosy\.diffusers\.model is empty"):
        build_generator("diffusers", DiffusersOptions(model=""))
    with pytest.raises(FileNotFoundError, match="no such folder"):
        build_generator("diffusers", DiffusersOptions(model="/nonexistent/sdxl"))
