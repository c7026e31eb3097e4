"""concepteval on your own LM (docs/your_lm.md §6): a ``family: custom`` model with ``model_dir`` is read by the same
loader as the paper profile's ``transformers_lm`` (:func:`neuroneval.external.own.perturbable_lm_spec`), on the
token stream of a ``kind: corpus`` dataset (:func:`neuroneval.external.corpus.corpus_token_stream`).

The oracle of the faithfulness test is a GPT-2 forward written out here from its equations (layer norms, causal
attention, the tanh GeLU MLP, tied unembedding), with the concept's ablation h' = h − (vᵀh + b)/(vᵀv)·v (paper 004
Eq. 5) applied between the modules: no forward hook, no ``split_lm``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

from neuroneval.concepteval.benchmark import MeasureOptions, cut_windows, measure_run
from neuroneval.concepteval.concepts import LinearConcept
from neuroneval.concepteval.sources import load_token_source
from neuroneval.external.corpus import corpus_token_stream
from neuroneval.external.own import perturbable_lm_spec
from neuroneval.models.lm import EOS_TOKEN, UNK_TOKEN, word_level_tokenizer
from neuroneval.params.check import concepteval_lm_problems

WORDS = ["the", "a", "cat", "dog", "bird", "sat", "ran", "on", "under", "mat", "tree", "red", "blue", "3", "7"]
VOCABULARY = [EOS_TOKEN, UNK_TOKEN, *WORDS]
WIDTH, CONTEXT = 16, 8


@pytest.fixture(scope="module")
def own_lm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 2-block GPT-2 and its word-level tokenizer saved with save_pretrained (as docs/your_lm.md §1 does), and a
    corpus file of one document a line; the concept's token stream written as rule external_corpus_stream does."""
    folder = tmp_path_factory.mktemp("own_lm")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(VOCABULARY), n_positions=16, n_embd=WIDTH, n_layer=2, n_head=2,
                                             bos_token_id=0, eos_token_id=0))
    model.save_pretrained(folder / "tiny-gpt2")
    word_level_tokenizer(VOCABULARY).save_pretrained(folder / "tiny-gpt2")
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(WORDS, size=int(rng.integers(5, 12)))) for _ in range(30)]
    (folder / "corpus.txt").write_text("\n".join(lines) + "\n")
    return folder / "tiny-gpt2", folder / "corpus.txt"


def corpus_spec(own_lm: tuple[Path, Path]) -> dict:
    model_dir, text = own_lm
    return {"text": str(text), "tokenizer_model": "tiny_gpt2", "model_dir": str(model_dir)}


def token_source(own_lm: tuple[Path, Path], tmp_path: Path):
    tokens, vocabulary = corpus_token_stream(corpus_spec(own_lm))
    np.save(tmp_path / "tokens.npy", tokens)
    (tmp_path / "vocabulary.json").write_text(json.dumps(vocabulary))
    spec = perturbable_lm_spec({"family": "custom", "model_dir": str(own_lm[0]), "sae": {"transformer.h.0": "sae"}},
                               key="concepteval.corpus.tiny_gpt2")  # what rule concepteval_hidden gets
    return load_token_source(model=own_lm[0], model_spec=spec, tokens=tmp_path / "tokens.npy",
                             vocabulary=tmp_path / "vocabulary.json")


def test_the_corpus_stream_is_every_line_in_vocabulary_ids_then_eos(own_lm: tuple[Path, Path]) -> None:
    tokens, vocabulary = corpus_token_stream(corpus_spec(own_lm))
    by_hand = [index for line in own_lm[1].read_text().splitlines()
               for index in [*(VOCABULARY.index(word) for word in line.split()), 0]]
    assert tokens.dtype == np.int64 and tokens.tolist() == by_hand
    assert vocabulary == {"tokenizer_model": "tiny_gpt2", "exclude": [0, 1], "vocabulary": VOCABULARY}


def test_a_custom_model_dir_is_read_as_a_transformers_lm_and_others_are_refused_by_key() -> None:
    custom = {"family": "custom", "model_dir": "/m", "sae": {"transformer.h.0": "s"}}
    assert perturbable_lm_spec(custom, key="k") == {"family": "transformers_lm", "model_dir": "/m"}
    paper = {"family": "transformers_lm", "model_dir": "/m", "context_length": 8}
    assert perturbable_lm_spec(paper, key="k") == paper
    with pytest.raises(ValueError, match=r"concepteval\.corpus\.mine: .*family custom model of \['torchscript'\]"):
        perturbable_lm_spec({"family": "custom", "torchscript": "m.pt"}, key="concepteval.corpus.mine")
    with pytest.raises(ValueError, match=r"concepteval\.corpus\.vit: .*not a model of family 'timm'"):
        perturbable_lm_spec({"family": "timm", "arch": "vit"}, key="concepteval.corpus.vit")


def test_the_source_of_a_custom_lm_is_its_model_its_corpus_and_its_positions(own_lm, tmp_path: Path) -> None:
    source = token_source(own_lm, tmp_path)
    assert isinstance(source.model, GPT2LMHeadModel) and source.planted is None
    assert source.vocabulary == VOCABULARY and source.replacement_id == 0 and source.exclude_ids == (0, 1)
    assert source.context_length == 16  # no context_length in a custom spec: the model's n_positions


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def hand_block(block: torch.nn.Module, h: torch.Tensor, heads: int, ablate_mlp=None) -> torch.Tensor:
    """One GPT-2 block from its weights: h + Attn(LN₁ h), then + W₂ GeLU(W₁ LN₂ h) (Conv1D weights are (in, out));
    ``ablate_mlp`` maps the MLP neurons GeLU(W₁ LN₂ h) before W₂."""
    def layer_norm(x, norm):
        return F.layer_norm(x, (x.shape[-1],), norm.weight.double(), norm.bias.double(), norm.eps)

    def conv(x, layer):
        return x @ layer.weight.double() + layer.bias.double()

    batch, length, width = h.shape
    q, k, v = conv(layer_norm(h, block.ln_1), block.attn.c_attn).split(width, dim=-1)
    q, k, v = (t.reshape(batch, length, heads, width // heads).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-1, -2) / math.sqrt(width // heads)
    scores = scores.masked_fill(torch.ones(length, length, dtype=torch.bool).triu(1), -torch.inf)
    attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, width)
    h = h + conv(attended, block.attn.c_proj)
    neurons = gelu_tanh(conv(layer_norm(h, block.ln_2), block.mlp.c_fc))
    if ablate_mlp is not None:
        neurons = ablate_mlp(neurons)
    return h + conv(neurons, block.mlp.c_proj)


def hand_logits(model: GPT2LMHeadModel, windows: np.ndarray, *, site: str, ablate) -> torch.Tensor:
    """Logits of GPT-2 on ``windows`` with ``ablate`` applied to block 0's output (``resid``) or to block 1's MLP
    neurons (``mlp``)."""
    transformer, heads = model.transformer, model.config.n_head
    ids = torch.as_tensor(windows)
    h = transformer.wte.weight.double()[ids] + transformer.wpe.weight.double()[torch.arange(ids.shape[1])]
    h = hand_block(transformer.h[0], h, heads)
    if site == "resid":
        h = ablate(h)
    h = hand_block(transformer.h[1], h, heads, ablate_mlp=ablate if site == "mlp" else None)
    h = F.layer_norm(h, (h.shape[-1],), transformer.ln_f.weight.double(), transformer.ln_f.bias.double(),
                     transformer.ln_f.eps)
    return h @ transformer.wte.weight.double().T


@pytest.mark.parametrize(("site", "layer"), [("resid", 0), ("mlp", 1)])
def test_the_perturbed_loss_equals_a_hand_forward_with_the_direction_ablated(own_lm, tmp_path: Path, site: str,
                                                                              layer: int) -> None:
    source = token_source(own_lm, tmp_path)
    starts = cut_windows(source.token_ids.size, CONTEXT)[:4]
    windows = source.token_ids[starts[:, None] + np.arange(CONTEXT)]
    width = WIDTH if site == "resid" else 4 * WIDTH
    direction = np.random.default_rng(1).normal(size=width)
    concept = LinearConcept(direction, 0.3, "random:0")
    options = MeasureOptions.from_params({"layer": layer, "site": site, "subsets": 2,
                                          "faithfulness": {"measures": ["ABL-Loss", "ABL-Div"], "weighting": "uniform"},
                                          "patterns": {"top_k": 3, "n_high": 4},
                                          "simulation": {"top_k": 4, "n_tokens": 2}})
    scores, _, truth = measure_run(source, windows, np.zeros((windows.size, 0)), [], [concept], options)
    measured = scores[scores["subset"] == "all"].set_index("measure")["value"]

    v = torch.as_tensor(direction)

    def ablate(h: torch.Tensor) -> torch.Tensor:
        return h - ((h @ v + 0.3) / (v @ v))[..., None] * v

    model = source.model.double()
    try:
        with torch.no_grad():
            clean = hand_logits(model, windows, site=site, ablate=lambda h: h)
            np.testing.assert_allclose(clean.numpy(), model(input_ids=torch.as_tensor(windows)).logits.numpy(),
                                       atol=1e-9)  # the hand forward is GPT-2's
            ablated = hand_logits(model, windows, site=site, ablate=ablate)
    finally:
        model.float()
    targets = torch.as_tensor(windows[:, 1:])

    def cross_entropy(logits: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")

    kl = (clean.log_softmax(-1).exp() * (clean.log_softmax(-1) - ablated.log_softmax(-1))).sum(-1)[:, :-1]
    assert measured["ABL-Loss"] == pytest.approx(float((cross_entropy(clean) - cross_entropy(ablated)).mean()),
                                                 rel=1e-4, abs=1e-7)
    assert measured["ABL-Div"] == pytest.approx(float(kl.mean()), rel=1e-4, abs=1e-9)
    assert float((ablated - clean).abs().max()) > 1e-3  # the ablation changes the logits: not a 0 = 0 comparison
    assert truth["alignment"].isna().all()  # a user's corpus has no planted concepts


def concepteval_config(**concepteval) -> dict:
    external = {"datasets": {"own_corpus": {"kind": "corpus", "text": "c.txt", "tokenizer_model": "mine"},
                             "pile": {"kind": "text", "path": "p.txt", "tokenizer_model": "pythia"},
                             "tables": {"kind": "tables"}},
                "models": {"mine": {"family": "custom", "model_dir": "tiny-gpt2"},
                           "pythia": {"family": "transformers_lm", "model_dir": "pythia"},
                           "scripted": {"family": "custom", "torchscript": "m.pt"}}}
    return {"external": external, "models": {"language": {"lm_small": {}}},
            "concepteval": {"family_set": "paper", "families": {"probe": {"planted": ["slot"]}}, **concepteval}}


@pytest.mark.parametrize(("concepteval", "message"), [
    ({"models": ["mine"]}, "concepteval.corpus: 'mine' of concepteval.models is a model of external.models without "
                           "a corpus: add concepteval.corpus.mine"),
    ({"models": ["scripted"], "corpus": {"scripted": "own_corpus"}},
     "concepteval.corpus.scripted: concepteval perturbs a transformers causal LM"),
    ({"models": ["mine"], "corpus": {"mine": "tables"}},
     "concepteval.corpus.mine: 'tables' is not a kind: text or kind: corpus dataset of external.datasets"),
    ({"models": ["mine"], "corpus": {"mine": "own_corpus"}, "family_set": "all"},
     "concepteval.families.probe: probes are fitted to the embedded text world's planted concepts"),
])
def test_the_params_check_names_what_concepteval_cannot_read(concepteval: dict, message: str) -> None:
    problems = concepteval_lm_problems(concepteval_config(**concepteval))
    assert len(problems) == 1 and problems[0].startswith(message), problems


def test_a_custom_lm_and_a_transformers_lm_on_their_corpora_pass_the_check() -> None:
    config = concepteval_config(models=["lm_small", "mine", "pythia"], corpus={"mine": "own_corpus", "pythia": "pile"})
    assert concepteval_lm_problems(config) == []
    config["concepteval"]["families"]["probe"] = None
    assert concepteval_lm_problems({**config, "concepteval": {**config["concepteval"], "family_set": "all"}}) == []


def test_the_workflow_params_check_refuses_by_key() -> None:
    """The same problems through :func:`neuroneval.params.check.reference_problems` (what the workflow
    runs), and an LM named nowhere still gets its unknown-name message."""
    from neuroneval.params.check import reference_problems

    config = concepteval_config(models=["scripted", "nowhere"], corpus={"scripted": "own_corpus"})
    problems = [problem for problem in reference_problems(config, tolerate_malformed=True)
                if problem.startswith("concepteval")]
    assert any(problem.startswith("concepteval.models[1]: 'nowhere' is not a model of models.language")
               for problem in problems), problems
    assert any(problem.startswith("concepteval.corpus.scripted: concepteval perturbs") for problem in problems)
