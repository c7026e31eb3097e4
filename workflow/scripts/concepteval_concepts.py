"""Snakemake entry point: see neuroneval.pipeline.concepteval_steps.concepteval_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.concepteval_steps import concepteval_concepts

run_step(concepteval_concepts, snakemake)  # noqa: F821 (injected by Snakemake)
