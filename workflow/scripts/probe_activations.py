"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.probe_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import probe_activations

run_step(probe_activations, snakemake)  # noqa: F821 (injected by Snakemake)
