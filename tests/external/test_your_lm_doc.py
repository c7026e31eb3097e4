"""docs/your_lm.md runs as written: its python block saved as ``mylm.py``, then its bash blocks in order, in a copy
of the workflow (the tiny params underneath the page's overlay). What it writes is checked against references
computed here: the tokens of the corpus, the SAE encoder applied by hand, the tables the workflow imported, and
concepteval's token stream and tables on the custom LM (§6)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from tests.external.test_your_model_doc import fenced_blocks
from tests.workflow.conftest import ROOT, make_workspace, run_tool, tiny_params

PAGE = ROOT / "docs" / "your_lm.md"


def test_the_page_has_its_model_script_and_commands() -> None:
    text = PAGE.read_text()
    python_blocks, bash_blocks = fenced_blocks(text, "python"), fenced_blocks(text, "bash")
    assert len(python_blocks) == 1 and python_blocks[0].startswith("# mylm.py\n")
    assert any("--sae" in block for block in bash_blocks)
    assert any("neuroneval concepts tokens" in block for block in bash_blocks)
    assert any("snakemake --cores" in block for block in bash_blocks)
    assert any("kind: corpus" in block and "sae: {transformer.h.0: sae}" in block for block in bash_blocks)
    assert any("corpus: {tiny_gpt2: lm_corpus}" in block and "results/concepteval/" in block for block in bash_blocks)
    assert "[your_lm.md](your_lm.md)" in (ROOT / "docs" / "your_model.md").read_text()


def corpus_concepts(corpus: Path) -> pd.DataFrame:
    """Each token's concepts from the corpus text itself: whitespace-separated words (the page's corpus puts a space
    around every punctuation mark), quotes toggling a span."""
    rows = []
    for line in corpus.read_text().splitlines():
        inside = False
        for word in line.split():
            if word == '"':
                inside = not inside
                rows.append((0, 0, 0, 0))
                continue
            rows.append((word.isdigit(), word in ("red", "green", "blue", "yellow", "purple"),
                         inside, word in ("Ann", "Bo", "Cy", "Dee")))
    return pd.DataFrame(rows, columns=["number", "colour", "quoted", "name"]).astype(np.float32)


@pytest.mark.slow
def test_the_commands_of_the_page_run_as_written(tmp_path: Path) -> None:
    """Slow (marker ``slow``): the page's commands run the workflow in a copy of it."""
    from safetensors.numpy import load_file

    text = PAGE.read_text()
    workspace = make_workspace(tmp_path / "workflow", tiny_params())
    (workspace / "mylm.py").write_text(fenced_blocks(text, "python")[0])
    imported_table4 = None
    for block in fenced_blocks(text, "bash"):
        result = run_tool(["bash", "-euo", "pipefail", "-c", block], workspace, check=False)
        assert result.returncode == 0, f"{block}\n{result.stdout[-3000:]}\n{result.stderr[-6000:]}"
        if "--configfile lm.yaml" in block:  # §5 rebuilds Table 4 for its own settings
            imported_table4 = pd.read_csv(workspace / "results/table4.csv")
    lm = workspace / "lm"

    concepts, metadata = io.read_concept_table(lm / "token_concepts.parquet")
    assert metadata["concepts"] == ["number", "colour", "quoted", "name"]
    pd.testing.assert_frame_equal(concepts.drop(columns="input_id"), corpus_concepts(lm / "corpus.txt"))
    assert concepts[["number", "colour", "quoted", "name"]].sum().min() > 20

    residual, _ = io.read_activation_table(lm / "recorded/transformer.h.0.parquet")
    features, _ = io.read_activation_table(lm / "recorded/transformer.h.0.sae.parquet")
    sae = load_file(str(lm / "sae/sae_weights.safetensors"))
    assert json.loads((lm / "sae/cfg.json").read_text())["architecture"] == "standard"
    by_hand = np.maximum((io.value_matrix(residual).astype(np.float64) - sae["b_dec"]) @ sae["W_enc"] + sae["b_enc"], 0)
    np.testing.assert_allclose(io.value_matrix(features), by_hand, rtol=1e-5, atol=1e-5)

    known = pd.read_csv(lm / "known_concepts.csv")
    scores = pd.read_csv(lm / "sae_scores.csv")
    auc = scores[scores["metric"] == "auc"].pivot(index="unit", columns="concept", values="score")
    for unit, concept in known.itertuples(index=False):
        assert auc.loc[unit].idxmax() == concept and auc.loc[unit, concept] > 0.9, (unit, auc.loc[unit])

    table4 = imported_table4
    assert table4 is not None and {"lm_sae", "lm_neurons"} <= set(table4.columns)
    assert (workspace / "results/sanity/experimental/lm_sae.csv").is_file()
    assert (workspace / "results/viewer/lm_sae/index.html").is_file()
    truth = pd.read_csv(workspace / "data/truth/lm_sae.csv")
    assert sorted(map(tuple, truth.to_numpy())) == sorted(map(tuple, known.to_numpy()))
    for layer in ("transformer.h.0.sae", "transformer.h.0.mlp.act"):
        imported, _ = io.read_activation_table(workspace / f"data/activations/lm_tokens/tiny_gpt2/{layer}.parquet")
        recorded, _ = io.read_activation_table(lm / f"recorded/{layer}.parquet")
        pd.testing.assert_frame_equal(imported, recorded)

    # §5: the workflow tokenized and recorded the corpus itself: the same tokens, concepts and values as
    # neuroneval record + neuroneval concepts tokens, hence the same Table 4 columns, truth and sanity tests
    assert (workspace / "data/external/lm_corpus/tokens.csv").read_text() == (lm / "recorded/tokens.csv").read_text()
    corpus_concepts_table, _ = io.read_concept_table(workspace / "data/concepts/lm_corpus/labels.parquet")
    pd.testing.assert_frame_equal(corpus_concepts_table, concepts)
    for layer in ("transformer.h.0.sae", "transformer.h.0.mlp.act"):
        recorded_here, metadata = io.read_activation_table(
            workspace / f"data/activations/lm_corpus/tiny_gpt2/{layer}.parquet")
        recorded, _ = io.read_activation_table(lm / f"recorded/{layer}.parquet")
        pd.testing.assert_frame_equal(recorded_here, recorded)
        assert metadata["pooling"] == "per_token" and metadata["dataset"] == "lm_corpus"
    corpus_table4 = pd.read_csv(workspace / "results/table4.csv").set_index("metric")
    for imported_setting, corpus_setting in (("lm_sae", "corpus_sae"), ("lm_neurons", "corpus_neurons")):
        np.testing.assert_allclose(corpus_table4[corpus_setting], table4.set_index("metric")[imported_setting],
                                   rtol=1e-6, atol=1e-6)
    corpus_truth = pd.read_csv(workspace / "data/truth/corpus_sae.csv")
    assert sorted(map(tuple, corpus_truth.to_numpy())) == sorted(map(tuple, known.to_numpy()))
    sanity = {name: pd.read_csv(workspace / f"results/sanity/experimental/{name}.csv").drop(columns="setting")
              for name in ("corpus_sae", "lm_sae")}
    pd.testing.assert_frame_equal(sanity["corpus_sae"], sanity["lm_sae"])
    # the corpus setting's viewer shows each input as its own token (highlighted) after its left context
    page = (workspace / "results/viewer/corpus_sae/index.html").read_text()
    shown = re.findall(r'<div class="tokens" data-input="(\d+)"[^>]*>(.*?)</div>', page, flags=re.S)
    tokens_csv = pd.read_csv(workspace / "data/external/lm_corpus/tokens.csv", keep_default_na=False)
    token_of = dict(zip(tokens_csv["input_id"].astype(int), tokens_csv["token"].astype(str), strict=True))
    assert shown, "the corpus viewer shows no token cards"
    for input_id, card in shown:
        (marked,) = re.findall(r"<mark>(.*?)</mark>", card)
        assert html.unescape(marked) == token_of[int(input_id)], (input_id, card)

    # §6: concepteval on the custom LM reads the corpus as one stream (each document's tokens, then <eos>) and
    # builds its tables for the paper's families; the retest run reads the same windows, so r = 1 where defined
    stream = np.load(workspace / "data/external/lm_corpus/tokens.npy")
    tokens = pd.read_csv(workspace / "data/external/lm_corpus/tokens.csv", keep_default_na=False)
    eos = json.loads((workspace / "data/external/lm_corpus/vocabulary.json").read_text())["exclude"][0]
    by_document = [[*group.sort_values("position")["token_id"], eos] for _, group in tokens.groupby("document")]
    assert stream.tolist() == [token for document in by_document for token in document]
    card = pd.read_csv(workspace / "data/concepteval/tiny_gpt2/concepts.csv")
    assert card["family"].value_counts()["neuron"] == 6 and set(card["family"]) == {"neuron", "sae"}
    measures = pd.read_csv(workspace / "results/concepteval/measures.csv")
    assert set(measures["model"]) == {"tiny_gpt2"} and set(measures["run"]) == {"test", "retest"}
    neurons = measures[(measures["family"] == "neuron") & measures["measure"].str.match("GRAD-|ABL-")]
    assert neurons["measure"].nunique() == 7 and np.isfinite(neurons["value"]).all()
    reliability = pd.read_csv(workspace / "results/concepteval/reliability.csv")
    retest = reliability[(reliability["statistic"] == "pearson") & reliability["measure"].str.match("ABL-")]
    np.testing.assert_allclose(retest["value"], 1.0, atol=1e-9)
    validity = pd.read_csv(workspace / "results/concepteval/validity.csv")
    assert (validity.loc[validity["criterion"].isin(["planted", "alignment"]), "n_concepts"] == 0).all()
