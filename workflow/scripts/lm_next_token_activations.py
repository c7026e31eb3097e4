"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.lm_next_token_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import lm_next_token_activations

run_step(lm_next_token_activations, snakemake)  # noqa: F821 (injected by Snakemake)
