"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_ties."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_ties

run_step(sanity_ties, snakemake)  # noqa: F821 (injected by Snakemake)
