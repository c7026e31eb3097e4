"""The paper profile's path: concepteval on a user-supplied Hugging Face causal LM checkpoint (GPT-2, or GPT-NeoX as
Pythia) and a user-supplied text corpus. Tiny 2-block, width-32 models are created and saved in the test (nothing is
downloaded), loaded back through :func:`neuroneval.models.loaders.load_model`, and the corpus file is tokenized by
:mod:`neuroneval.external.text_datasets`; the sites are checked against the model's own hidden states and a
hand-computed MLP, then every measure runs end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel, GPTNeoXConfig, GPTNeoXForCausalLM

from neuroneval.concepteval import (
    CooccurrenceCorpus,
    FaithfulnessOptions,
    PatternOptions,
    ReadabilityOptions,
    SimulationOptions,
    site_activations,
    split_lm,
)
from neuroneval.concepteval.benchmark import (
    build_families,
    cut_windows,
    deal_windows,
    readability_measures,
    run_measures,
)
from neuroneval.concepteval.faithfulness import MEASURES
from neuroneval.concepteval.lm_split import transformer_blocks
from neuroneval.external.text_datasets import read_documents, special_token_ids, token_stream, tokenizer_vocabulary
from neuroneval.models.lm import EOS_TOKEN, UNK_TOKEN, word_level_tokenizer
from neuroneval.models.loaders import load_model

WORDS = ["the", "a", "cat", "dog", "bird", "sat", "ran", "flew", "on", "under", "mat", "tree", "roof", "big", "small"]
VOCABULARY = [EOS_TOKEN, UNK_TOKEN, *WORDS]
WIDTH, LAYERS, CONTEXT = 32, 2, 8


def _model(architecture: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if architecture == "gpt2":
        return GPT2LMHeadModel(GPT2Config(vocab_size=len(VOCABULARY), n_positions=16, n_embd=WIDTH, n_layer=LAYERS,
                                          n_head=2))
    return GPTNeoXForCausalLM(GPTNeoXConfig(vocab_size=len(VOCABULARY), hidden_size=WIDTH, num_hidden_layers=LAYERS,
                                            num_attention_heads=2, intermediate_size=4 * WIDTH,
                                            max_position_embeddings=16, use_parallel_residual=True))


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=12)) for _ in range(40)]
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=["gpt2", "gpt_neox"])
def checkpoint(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A tiny model and its word-level tokenizer saved with save_pretrained, loaded back as the profile loads it."""
    directory = tmp_path_factory.mktemp(request.param)
    _model(request.param).save_pretrained(directory)
    word_level_tokenizer(VOCABULARY).save_pretrained(directory)
    loaded = load_model({"family": "transformers_lm", "model_dir": str(directory)})
    model = loaded.module.eval()
    model.set_attn_implementation("eager")  # GRAD's double back-propagation (see concepteval_measures)
    return request.param, model, loaded.tokenizer


def test_sites_are_the_models_own_hidden_states(checkpoint, corpus_file: Path) -> None:
    architecture, model, tokenizer = checkpoint
    tokens = token_stream(read_documents(corpus_file), tokenizer, max_tokens=200)
    windows = tokens[cut_windows(tokens.size, CONTEXT)[:, None] + np.arange(CONTEXT)][:6]
    with torch.no_grad():
        output = model(input_ids=torch.as_tensor(windows), output_hidden_states=True)
    resid = site_activations(model, windows, layer=0, site="resid")
    torch.testing.assert_close(resid, output.hidden_states[1])  # block 0's output
    split = split_lm(model, windows, layer=LAYERS - 1, site="mlp")
    assert split.hidden.shape == (6, CONTEXT, 4 * WIDTH)
    torch.testing.assert_close(split.head(split.hidden), output.logits.double(), rtol=1e-5, atol=1e-5)
    if architecture == "gpt_neox":  # parallel residual: the MLP reads LN(block input), GeLU(W1 LN(x) + b1)
        block = transformer_blocks(model)[LAYERS - 1]
        hand = F.gelu(block.mlp.dense_h_to_4h(block.post_attention_layernorm(output.hidden_states[LAYERS - 1])))
        torch.testing.assert_close(split.hidden.float(), hand, rtol=1e-5, atol=1e-5)
    doubled = split.head(split.hidden.repeat(2, 1, 1))
    torch.testing.assert_close(doubled[6:], doubled[:6])


def test_every_measure_runs_on_a_checkpoint_and_a_corpus_file(checkpoint, corpus_file: Path) -> None:
    architecture, model, tokenizer = checkpoint
    vocabulary = tokenizer_vocabulary(tokenizer, model.config.vocab_size)
    assert vocabulary == VOCABULARY
    tokens = token_stream(read_documents(corpus_file), tokenizer, max_tokens=400)
    windows = tokens[cut_windows(tokens.size, CONTEXT)[:, None] + np.arange(CONTEXT)]
    parts = deal_windows(len(windows), fit=20, run=12, seed=0, run_seeds=[1, 2])
    layer, site = LAYERS - 1, "mlp"
    hidden = site_activations(model, windows[parts["fit"]], layer=layer, site=site).double().numpy()
    hidden = hidden.reshape(-1, hidden.shape[-1])
    families = {"neuron": {"count": 3, "seed": 0}, "pca": {"count": 2}, "kmeans": {"count": 2, "seed": 0},
                "random": {"count": 3, "seed": 0}}
    concepts, card = build_families(hidden, np.zeros((len(hidden), 0)), [], families)
    assert list(card["family"].drop_duplicates()) == list(families)
    exclude = tuple(special_token_ids(tokenizer))
    scores, patterns = run_measures(
        model, windows[parts["test"]], concepts, layer=layer, site=site, subsets=2,
        corpus=CooccurrenceCorpus.from_tokens(tokens, len(vocabulary), window=16),
        faithfulness_options=FaithfulnessOptions(concept_batch=5),
        pattern_options=PatternOptions(top_k=4, n_high=6, replacement_id=VOCABULARY.index(UNK_TOKEN),
                                       exclude_ids=exclude),
        readability_options=ReadabilityOptions(window=16), simulation_options=SimulationOptions(top_k=10, n_tokens=2),
        vocabulary=vocabulary)
    whole = scores[scores["subset"] == "all"]
    names = [*MEASURES, *readability_measures(ReadabilityOptions().cooccurrence_sides)]
    assert sorted(set(whole["measure"])) == sorted(names)
    assert len(whole) == len(concepts) * len(names)
    faithful = whole[whole["measure"].isin(MEASURES)]["value"]
    assert np.isfinite(faithful).all(), architecture
    bounded = whole[whole["measure"].isin(["IN-EmbCos", "OUT-EmbCos", "SIM-Corr"])]["value"].dropna()
    assert bounded.between(-1 - 1e-9, 1 + 1e-9).all() and len(bounded) > 0
    assert (whole[whole["measure"] == "ABL-Div"]["value"] >= -1e-9).all()  # a KL divergence
    assert set(patterns) == {"IN", "OUT"} and patterns["OUT"].shape[0] == len(concepts)
    assert not np.isin(patterns["IN"], exclude).any()


def test_the_steps_run_on_an_external_checkpoint_and_corpus(tmp_path: Path, corpus_file: Path) -> None:
    """The workflow's steps with the paper profile's inputs: a GPT-NeoX checkpoint (``params.model_spec``) and the
    token stream and vocabulary that rule external_text_dataset writes; no planted concepts, so no probes and no
    rated criterion."""
    import json
    from types import SimpleNamespace

    import pandas as pd

    from neuroneval.concepteval.protocol import RUNS
    from neuroneval.pipeline.concepteval_steps import (
        concepteval_concepts,
        concepteval_hidden,
        concepteval_measures,
        concepteval_tables,
    )

    model_dir = tmp_path / "neox"
    _model("gpt_neox").save_pretrained(model_dir)
    tokenizer = word_level_tokenizer(VOCABULARY)
    tokenizer.save_pretrained(model_dir)
    tokens = token_stream(read_documents(corpus_file), tokenizer, max_tokens=420)
    np.save(tmp_path / "tokens.npy", tokens)
    (tmp_path / "vocabulary.json").write_text(json.dumps({"tokenizer_model": "neox", "vocabulary": VOCABULARY,
                                                          "exclude": special_token_ids(tokenizer)}))
    spec = {"family": "transformers_lm", "model_dir": str(model_dir), "context_length": 16}
    sources = {"model": [str(model_dir)], "tokens": str(tmp_path / "tokens.npy"),
               "vocabulary": str(tmp_path / "vocabulary.json")}
    data, runs, results = tmp_path / "data", tmp_path / "runs" / "neox", tmp_path / "results"
    common = {"wildcards": SimpleNamespace(lm="neox"), "threads": 1}
    concepteval_hidden(SimpleNamespace(
        input=SimpleNamespace(**sources), output=SimpleNamespace(hidden=str(data / "hidden.npz")),
        params=SimpleNamespace(model_spec=spec, window_length=CONTEXT, layer=1, site="resid",
                               windows={"seed": 0, "fit": 20, "run": 12}, runs=[1, 2], planted=None), **common))
    with np.load(data / "hidden.npz") as arrays:
        assert arrays["test_windows"].shape == (12, CONTEXT) and arrays["test_labels"].shape == (12 * CONTEXT, 0)
        assert arrays["fit_hidden"].shape == (20 * CONTEXT, WIDTH)
    families = {"neuron": {"count": 3, "seed": 0}, "pca": {"count": 2}, "random": {"count": 4, "seed": 0}}
    concepteval_concepts(SimpleNamespace(
        input=SimpleNamespace(hidden=str(data / "hidden.npz"), sae=""),
        output=SimpleNamespace(concepts=str(data / "concepts.npz"), card=str(data / "concepts.csv")),
        params=SimpleNamespace(families=families, family_set="all"), **common))
    for run in RUNS:
        concepteval_measures(SimpleNamespace(
            input=SimpleNamespace(**sources, hidden=str(data / "hidden.npz"), concepts=str(data / "concepts.npz")),
            output=SimpleNamespace(measures=str(runs / f"{run}.csv"), patterns=str(runs / f"{run}_patterns.csv"),
                                   truth=str(runs / f"{run}_truth.csv")),
            params=SimpleNamespace(model_spec=spec, layer=1, site="resid", subsets=2, faithfulness={},
                                   patterns={"top_k": 4, "n_high": 6}, readability={"window": 16},
                                   simulation={"top_k": 10, "n_tokens": 2}),
            wildcards=SimpleNamespace(lm="neox", run=run), threads=1))
    truth = pd.read_csv(runs / "test_truth.csv")
    assert truth["alignment"].isna().all() and len(truth) == 9
    patterns = pd.read_csv(runs / "test_patterns.csv", keep_default_na=False)
    assert set(patterns["token"]) <= set(WORDS)  # <eos>/<unk> never enter a pattern
    concepteval_tables(SimpleNamespace(
        input=SimpleNamespace(measures=[str(runs / f"{run}.csv") for run in RUNS],
                              patterns=[str(runs / f"{run}_patterns.csv") for run in RUNS],
                              truth=[str(runs / f"{run}_truth.csv") for run in RUNS]),
        output=SimpleNamespace(measures=results / "measures.csv", reliability=results / "reliability.csv",
                               reliability_figure=results / "reliability.png", inter_rater=results / "inter_rater.csv",
                               validity=results / "validity.csv", mtmm=results / "mtmm.csv",
                               mtmm_figure=results / "mtmm.png", methods=results / "methods.csv",
                               methods_figure=results / "methods.png", patterns=results / "patterns.md"),
        params=SimpleNamespace(subsets=2, faithfulness_measures=list(MEASURES),
                               measurement={"bootstrap": {"n_boot": 20}}, raters={"n_raters": 3},
                               comparison=["ABL-Div", "SIM-Corr"], patterns_shown=1),
        wildcards=SimpleNamespace(), threads=1))
    reliability = pd.read_csv(results / "reliability.csv")
    measures = pd.read_csv(results / "measures.csv")
    wide = measures[measures["measure"] == "ABL-Div"].pivot(index="concept", columns="run", values="value")
    retest = reliability[(reliability["measure"] == "ABL-Div") & (reliability["run"] == "test-retest")]["value"]
    assert retest.iloc[0] == pytest.approx(np.corrcoef(wide["test"], wide["retest"])[0, 1], rel=1e-4)
    assert pd.read_csv(results / "inter_rater.csv").empty  # nothing planted, nothing to rate
    validity = pd.read_csv(results / "validity.csv")
    assert validity[validity["criterion"].isin(["alignment", "raters"])]["value"].isna().all()
    assert set(pd.read_csv(results / "methods.csv")["family"]) == set(families)
