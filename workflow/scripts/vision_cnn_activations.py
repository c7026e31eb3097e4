"""Snakemake entry point: see neuroneval.pipeline.steps.vision_cnn_activations."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import vision_cnn_activations

run_step(vision_cnn_activations, snakemake)  # noqa: F821 (injected by Snakemake)
