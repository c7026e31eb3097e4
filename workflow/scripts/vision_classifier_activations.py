"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.vision_classifier_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import vision_classifier_activations

run_step(vision_classifier_activations, snakemake)  # noqa: F821 (injected by Snakemake)
