"""Snakemake entry point: see neuroneval.pipeline.external_steps.external_vision_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.external_steps import external_vision_activations

run_step(external_vision_activations, snakemake)  # noqa: F821 (injected by Snakemake)
