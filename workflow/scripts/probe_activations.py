"""Snakemake entry point: see neuroneval.pipeline.contrastive_steps.probe_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.contrastive_steps import probe_activations

run_step(probe_activations, snakemake)  # noqa: F821 (injected by Snakemake)
