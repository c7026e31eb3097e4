"""Snakemake entry point: see neuroneval.pipeline.concepteval_steps.concepteval_measures."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.concepteval_steps import concepteval_measures

run_step(concepteval_measures, snakemake)  # noqa: F821 (injected by Snakemake)
