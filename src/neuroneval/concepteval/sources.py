"""What the paper-004 benchmark reads besides its windows (docs/concepteval.md §Workflow): the embedded text world
and LM, or a user's transformers checkpoint and the token stream of its corpus, and the benchmark's own files
(concepts, sparse autoencoders, ``.npz`` arrays), each written atomically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class TokenSource:
    """What the steps read besides the windows: the LM, the token stream (and its documents), the vocabulary, the
    token that replaces ablated context tokens, the tokens no pattern may hold, the default window length, and the
    planted word class and topic of every token (``None`` for a user's corpus, which has none)."""

    model: Any
    token_ids: np.ndarray
    vocabulary: list[str]
    doc_offsets: np.ndarray | None
    replacement_id: int
    exclude_ids: tuple[int, ...]
    context_length: int
    planted: tuple[np.ndarray, np.ndarray, int] | None


def load_token_source(*, model: str | Path, world: str | Path | None = None, model_spec: Mapping | None = None,
                      tokens: str | Path | None = None, vocabulary: str | Path | None = None) -> TokenSource:
    """The embedded text world ``world`` and LM ``model``, or — when ``model_spec`` is set — an LM of
    ``external.models`` as :func:`neuroneval.external.own.perturbable_lm_spec` gives it (a ``transformers_lm``
    of the paper profile, or a ``family: custom`` model with ``model_dir``, docs/your_lm.md), loaded with
    ``neuroneval.models.loaders``, and the token stream of its corpus (``tokens``, ``vocabulary``: rule
    ``external_text_dataset`` for a ``kind: text`` dataset, ``external_corpus_stream`` for a ``kind: corpus`` one).
    The default window length is the spec's ``context_length``, else the model's positions."""
    if not model_spec:
        from neuroneval.models.lm import load_lm
        from neuroneval.worlds.text import EOS_ID, UNK_ID, load_text_world

        text_world = load_text_world(Path(world))
        lm = load_lm(Path(model))
        return TokenSource(lm, text_world.token_ids, list(text_world.vocabulary), text_world.doc_offsets, UNK_ID,
                           (EOS_ID, UNK_ID), int(lm.config.n_positions),
                           (text_world.slot_of_token, text_world.topic_of_token,
                            int(text_world.topic_mixture.shape[1])))
    import json

    from neuroneval.external.config import loader_spec
    from neuroneval.models.loaders import load_model

    stream = json.loads(Path(vocabulary).read_text())
    exclude = tuple(int(index) for index in stream["exclude"])
    if not exclude:
        raise ValueError(f"concepteval: the corpus's tokenizer ({vocabulary}) has no special token to replace "
                         "ablated tokens with")
    lm = load_model(loader_spec(model_spec)).module.eval()
    if len(stream["vocabulary"]) != int(lm.config.vocab_size):
        raise ValueError(f"concepteval: the corpus was cut with {stream['tokenizer_model']}'s tokenizer "
                         f"({len(stream['vocabulary'])} tokens), the model has {lm.config.vocab_size}")
    positions = getattr(lm.config, "n_positions", None) or getattr(lm.config, "max_position_embeddings", 0)
    return TokenSource(lm, np.load(tokens), list(stream["vocabulary"]), None, exclude[0], exclude,
                       int(model_spec.get("context_length") or positions or 0), None)


def save_npz(path: str | Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``arrays`` in one compressed ``.npz``, written atomically."""
    from neuroneval import io

    with io.atomic_path(path) as tmp_path, open(tmp_path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def concept_kind(concept: Any) -> str:
    """``linear`` (a = vᵀh + b) or ``relu`` (a = ReLU(vᵀh + b)); other concepts are not stored."""
    from neuroneval.concepteval.concepts import LinearConcept, ReluConcept

    if isinstance(concept, LinearConcept):
        return "linear"
    if isinstance(concept, ReluConcept):
        return "relu"
    raise ValueError(f"concept {concept.name!r}: only linear and ReLU concepts can be stored")


def save_concepts(path: str | Path, concepts: Sequence[Any]) -> None:
    """Names, kinds, directions (C, m) and biases (C,) of linear/ReLU concepts in one ``.npz``."""
    arrays = {"names": np.array([concept.name for concept in concepts]),
              "kinds": np.array([concept_kind(concept) for concept in concepts]),
              "directions": np.stack([concept.direction for concept in concepts]),
              "biases": np.array([concept.bias for concept in concepts])}
    save_npz(path, arrays)


def load_concepts(path: str | Path) -> list[Any]:
    """The concepts :func:`save_concepts` wrote, in order."""
    from neuroneval.concepteval.concepts import LinearConcept, ReluConcept

    with np.load(path) as data:
        classes = {"linear": LinearConcept, "relu": ReluConcept}
        return [classes[str(kind)](direction, float(bias), str(name))
                for name, kind, direction, bias in zip(data["names"], data["kinds"], data["directions"],
                                                       data["biases"], strict=True)]


def save_sae(path: str | Path, sae: Any) -> None:
    """The weights of a :class:`~neuroneval.concepteval.sae.SparseAutoencoder` in one ``.npz``."""
    save_npz(path, {"encoder": sae.encoder, "encoder_bias": sae.encoder_bias, "decoder": sae.decoder,
                    "decoder_bias": sae.decoder_bias})


def load_sae(path: str | Path) -> Any:
    """The sparse autoencoder :func:`save_sae` wrote."""
    from neuroneval.concepteval.sae import SparseAutoencoder

    with np.load(path) as data:
        return SparseAutoencoder(report={}, **{name: data[name] for name in data.files})
