"""Snakemake entry point: see neuroneval.pipeline.steps.vision_classifier_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import vision_classifier_activations

run_step(vision_classifier_activations, snakemake)  # noqa: F821 (injected by Snakemake)
