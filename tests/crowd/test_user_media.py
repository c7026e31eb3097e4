"""``neuroneval crowd design`` with the user's own media: sklearn's digits in headless Chromium, texts, prompts.

The digits array is stored in an order that differs from the activation table's, with an ids array saying which
input each row shows; every picture on the page, decoded by Chromium into pixels, must be the digits row of its
input id (the oracle is sklearn's own array, indexed by the test's id → row map).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from neuroneval import io
from neuroneval.cli import main
from neuroneval.crowd import read_design
from tests.crowd.chromium import INSTALL_HINT, READ_PICTURES, Browser, chromium_path


@pytest.fixture(scope="module")
def digits_files(tmp_path_factory) -> dict[str, Path]:
    """A unit that fires on fives, one-hot class concepts, and the digits images in a shuffled row order."""
    root = tmp_path_factory.mktemp("digits_media")
    digits = load_digits()
    n = 600
    targets = digits.target[:n]
    ids = 7000 + 3 * np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(0)
    unit = (targets == 5) + 0.3 * rng.standard_normal(n)
    activations = pd.DataFrame({"input_id": ids, "fives": unit.astype(np.float32),
                                "threes": ((targets == 3) + 0.3 * rng.standard_normal(n)).astype(np.float32)})
    concepts = pd.DataFrame({f"class:{d}": (targets == d).astype(np.float32) * 0.9 + 0.05 for d in range(10)})
    concepts.insert(0, "input_id", ids)
    order = rng.permutation(n)
    np.save(root / "digits.npy", digits.images[:n][order])
    np.save(root / "ids.npy", ids[order])
    np.save(root / "short_ids.npy", ids[order][:-1])
    pd.DataFrame({"unit": ["fives", "threes"], "explanation": ["class:5", "class:3"]}).to_csv(root / "pairs.csv",
                                                                                             index=False)
    pd.DataFrame({"concept": ["class:5"], "text": ["the handwritten digit five"]}).to_csv(root / "prompts.csv",
                                                                                          index=False)
    return {
        "activations": io.write_activation_table(root / "acts.parquet", activations, metadata={"model": "digits"}),
        "concepts": io.write_concept_table(root / "classes.parquet", concepts, metadata={"source": "labels"}),
        "pairs": root / "pairs.csv",
        "images": root / "digits.npy",
        "ids": root / "ids.npy",
        "short_ids": root / "short_ids.npy",
        "prompts": root / "prompts.csv",
        "targets": targets,
        "id_values": ids,
    }


def design(files: dict, out: Path, *extra: str) -> int:
    return main(["crowd", "design", "--activations", str(files["activations"]), "--concepts", str(files["concepts"]),
                 "--pairs", str(files["pairs"]), "--budget", "60", "--raters", "1", "--out", str(out), *extra])


def test_digit_pages_show_the_right_digit_for_every_input_in_chromium(digits_files, tmp_path, capsys) -> None:
    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the study-page test but is not on PATH; install it with: {INSTALL_HINT}")
    study = tmp_path / "study"
    assert design(digits_files, study, "--images", str(digits_files["images"]), "--image-ids",
                  str(digits_files["ids"]), "--prompts", str(digits_files["prompts"])) == 0, capsys.readouterr().err
    samples = read_design(study).samples
    pages = sorted(study.glob("batch_*.html"))
    row_of = {int(i): r for r, i in enumerate(digits_files["id_values"])}
    digits = load_digits().images
    shown: dict[int, list[int]] = {}
    wording = []
    with Browser(binary) as browser:
        for page in pages:
            browser.open(page.as_uri())
            browser.wait_for("Array.from(document.images).every(function (i) { return i.complete; })")
            for picture in browser.evaluate(READ_PICTURES):
                shown[picture["input"]] = picture["grey"]
                assert (picture["height"], picture["width"]) == (8, 8)
            wording += browser.evaluate("Array.from(document.querySelectorAll('section.task')).map(function (s) "
                                        "{ return [s.dataset.explanation, s.querySelector('q').textContent]; })")
    assert sorted(shown) == sorted(samples["input_id"].unique().tolist())
    for input_id, grey in shown.items():
        expected = np.rint(digits[row_of[input_id]] / 16.0 * 255.0).astype(int)  # load_digits pixels are 0…16
        np.testing.assert_array_equal(np.reshape(grey, (8, 8)), expected, err_msg=f"input {input_id}")
    assert set(map(tuple, wording)) == {("class:5", "the handwritten digit five"), ("class:3", "class 3")}
    fives = samples.loc[samples["explanation"] == "class:5", "input_id"]
    assert (digits_files["targets"][[row_of[int(i)] for i in fives]] == 5).mean() > 0.5  # the unit's top inputs


def test_ids_of_another_length_than_the_images_are_an_error(digits_files, tmp_path, capsys) -> None:
    out = tmp_path / "study"
    assert design(digits_files, out, "--images", str(digits_files["images"]), "--image-ids",
                  str(digits_files["short_ids"])) == 2
    error = capsys.readouterr().err
    assert "digits.npy has 600 image(s) but" in error and "short_ids.npy lists 599 input id(s)" in error
    assert not out.exists()
    assert design(digits_files, out, "--images", str(digits_files["images"])) == 2
    assert "--image-ids rows" in capsys.readouterr().err


def test_missing_ids_are_named_with_their_count(digits_files, tmp_path, capsys) -> None:
    """Rows read as ids 0…599 (explicitly declared) hold none of the table's ids 7000…: every sampled id is missing."""
    assert design(digits_files, tmp_path / "study", "--images", str(digits_files["images"]),
                  "--image-ids", "rows") == 2
    error = capsys.readouterr().err
    match = re.search(r"digits\.npy: no image for (\d+) of the (\d+) requested input id\(s\), e.g. \[([\d, ]+)\]",
                      error)
    assert match and match.group(1) == match.group(2), error
    assert all(int(i) >= 7000 for i in match.group(3).split(", ")) and len(match.group(3).split(", ")) == 5


def test_a_formula_prior_is_the_simulated_formula(digits_files, tmp_path, capsys) -> None:
    from neuroneval.explain.simulate import simulate

    (tmp_path / "pairs.csv").write_text('unit,explanation\nfives,"""class:5"" AND NOT ""class:3"""\n'
                                        'threes,"""class:3"" OR ""class:8"""\n')
    files = {**digits_files, "pairs": tmp_path / "pairs.csv"}
    assert design(files, tmp_path / "study", "--sampling", "pseudo") == 0, capsys.readouterr().err
    samples = read_design(tmp_path / "study").samples
    concepts, _ = io.read_concept_table(digits_files["concepts"])
    row_of = {int(i): r for r, i in enumerate(concepts["input_id"])}
    for explanation, closed_form in (('"class:5" AND NOT "class:3"', lambda c: c["class:5"] * (1 - c["class:3"])),
                                     ('"class:3" OR "class:8"', lambda c: 1 - (1 - c["class:3"]) * (1 - c["class:8"]))):
        rows = samples[samples["explanation"] == explanation]
        assert len(rows) > 0
        picked = concepts.iloc[[row_of[int(i)] for i in rows["input_id"]]]
        np.testing.assert_allclose(rows["prior"], closed_form(picked).to_numpy(dtype=float), rtol=1e-6)
        simulated = simulate(explanation, concepts.drop(columns="input_id").to_numpy(dtype=float),
                             [c for c in concepts.columns if c != "input_id"])
        np.testing.assert_allclose(rows["prior"], simulated[[row_of[int(i)] for i in rows["input_id"]]], rtol=1e-12)
    page = (tmp_path / "study" / "batch_000.html").read_text()
    assert "<q>class 5 and not class 3</q>" in page and "<q>class 3 or class 8</q>" in page


def test_a_formula_over_unknown_concepts_is_refused(digits_files, tmp_path, capsys) -> None:
    (tmp_path / "pairs.csv").write_text('unit,explanation\nfives,"""class:5"" AND striped"\n')
    assert design({**digits_files, "pairs": tmp_path / "pairs.csv"}, tmp_path / "study") == 2
    assert re.search(r"pairs\.csv, line 2, column explanation: unknown explanation .*nor a formula",
                     capsys.readouterr().err)


def test_text_pages_show_each_token_in_its_left_context(digits_files, tmp_path, capsys) -> None:
    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the study-page test but is not on PATH; install it with: {INSTALL_HINT}")
    ids = digits_files["id_values"]
    tokens = pd.DataFrame({"input_id": ids, "document": ids // 100, "position": ids % 100, "token_id": ids % 50,
                           "token": [f"tok{i}" for i in ids], "context": [f"left <of> {i} & " for i in ids]})
    tokens.to_csv(tmp_path / "tokens.csv", index=False)
    assert design(digits_files, tmp_path / "study", "--texts", str(tmp_path / "tokens.csv")) == 0
    with Browser(binary) as browser:
        browser.open((tmp_path / "study" / "batch_000.html").as_uri())
        shown = browser.evaluate("""Array.from(document.querySelectorAll('input.answer')).map(function (box) {
            const snippet = box.parentElement.querySelector('.snippet');
            return [Number(box.dataset.input), snippet.textContent, snippet.querySelector('mark').textContent]; })""")
    assert len(shown) == len(read_design(tmp_path / "study").samples)
    for input_id, text, marked in shown:
        assert (text, marked) == (f"left <of> {input_id} & tok{input_id}", f"tok{input_id}")
    pd.DataFrame({"input_id": ids[:10], "text": "x"}).to_csv(tmp_path / "few.csv", index=False)
    assert design(digits_files, tmp_path / "other", "--texts", str(tmp_path / "few.csv")) == 2
    assert re.search(r"few\.csv: no text for \d+ of the \d+ requested input id\(s\)", capsys.readouterr().err)


def test_only_one_kind_of_media_is_accepted(digits_files, tmp_path, capsys) -> None:
    assert design(digits_files, tmp_path / "study", "--images", str(digits_files["images"]), "--texts",
                  str(digits_files["prompts"])) == 2
    assert "give one of --world, --images, --texts for the pages, not --images and --texts" in json.dumps(
        capsys.readouterr().err)


def test_the_readme_command_runs_as_written(digits_files, monkeypatch, capsys) -> None:
    """README's ``crowd design`` example with your own digits, run in the folder of the files it names."""
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    block = re.search(r"```bash\n(neuroneval crowd design [^`]*--image-ids ids\.npy[^`]*)```", readme).group(1)
    monkeypatch.chdir(digits_files["images"].parent)
    assert main(shlex.split(block.replace("\\\n", " "))[1:]) == 0, capsys.readouterr().err
    assert (digits_files["images"].parent / "study" / "batch_000.html").exists()
