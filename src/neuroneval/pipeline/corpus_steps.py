"""Workflow steps of your own language model (``workflow/rules/own_corpus.smk``): a ``kind: corpus`` dataset's
tokens and concepts (and its token stream, which concepteval reads), and a ``family: custom`` transformers LM (and its
SAE) recorded on it per token.

One function per rule, each taking a :class:`~neuroneval.pipeline.runner.StepIO`; the library code is
:mod:`neuroneval.external.corpus`. Params arrive resolved: absolute paths.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def external_corpus_dataset(job: StepIO) -> None:
    """``tokens.csv`` and the ``labels`` concept table of a corpus dataset, from its tokenizer and token rules."""
    from neuroneval.external.corpus import corpus_concept_table, corpus_tokens

    io.write_csv(job.output.tokens, corpus_tokens(job.params.dataset))
    frame, metadata = corpus_concept_table(job.output.tokens, job.params.dataset, dataset=job.wildcards.corpus_dataset)
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    print(json.dumps({"dataset": job.wildcards.corpus_dataset, "tokens": len(frame),
                      "concepts": {name: int(frame[name].sum()) for name in metadata["concepts"]}}))


def external_corpus_activations(job: StepIO) -> None:
    """One layer of a custom transformers LM (``<layer>.sae``: its SAE's features) on a corpus dataset, per token."""
    from neuroneval.external.corpus import record_corpus_layer
    from neuroneval.external.images import resolve_device

    dataset = job.params.dataset
    options = {"device": str(resolve_device(job.params.runtime["device"])),
               "batch_size": int(job.params.runtime["batch_size"])}
    output = Path(job.output[0])
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent, prefix=".record-") as scratch:
        frame, metadata = record_corpus_layer(job.params.model, dataset, job.wildcards.layer, job.params.sae, scratch,
                                              tokens_file=job.input.tokens,
                                              known_file=dataset.get("known_concepts"), options=options)
    metadata.update({"model": job.wildcards.custom_model, "dataset": job.wildcards.corpus_dataset,
                     "layer": job.wildcards.layer, "tokens": str(job.input.tokens),
                     "recorded": {"model": metadata.get("model"), "dataset": metadata.get("dataset")}})
    io.write_activation_table(output, frame, metadata=metadata)
    print(json.dumps({"layer": job.wildcards.layer, "units": frame.shape[1] - 1, "inputs": len(frame),
                      "units_with_known_concepts": len(metadata["unit_concepts"])}))


def external_corpus_stream(job: StepIO) -> None:
    """``tokens.npy`` and ``vocabulary.json`` of a corpus dataset: the whole corpus as one token stream of its
    tokenizer model, what concepteval reads (the files rule ``external_text_dataset`` writes for a text dataset)."""
    import numpy as np

    from neuroneval.external.corpus import corpus_token_stream

    tokens, vocabulary = corpus_token_stream(job.params.dataset)
    with io.atomic_path(Path(job.output.tokens)) as temporary, open(temporary, "wb") as handle:
        np.save(handle, tokens)
    io.write_json(job.output.vocabulary, vocabulary)
    print(json.dumps({"dataset": job.wildcards.corpus_dataset, "tokens": int(tokens.size),
                      "vocabulary": len(vocabulary["vocabulary"]), "exclude": vocabulary["exclude"]}))
