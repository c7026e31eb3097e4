"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.lm_ideal_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import lm_ideal_activations

run_step(lm_ideal_activations, snakemake)  # noqa: F821 (injected by Snakemake)
