"""Snakemake entry point: see neuroneval.pipeline.cosy_steps.cosy_train_embedded."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.cosy_steps import cosy_train_embedded

run_step(cosy_train_embedded, snakemake)  # noqa: F821 (injected by Snakemake)
