"""Snakemake entry point: see neuroneval.pipeline.external_steps.external_lm_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.external_steps import external_lm_activations

run_step(external_lm_activations, snakemake)  # noqa: F821 (injected by Snakemake)
