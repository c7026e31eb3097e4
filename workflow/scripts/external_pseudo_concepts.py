"""Snakemake entry point: see neuroneval.pipeline.external_steps.external_pseudo_concepts."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.external_steps import external_pseudo_concepts

run_step(external_pseudo_concepts, snakemake)  # noqa: F821 (injected by Snakemake)
