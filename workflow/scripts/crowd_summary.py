"""Snakemake entry point: see neuroneval.pipeline.crowd_steps.crowd_summary."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.crowd_steps import crowd_summary

run_step(crowd_summary, snakemake)  # noqa: F821 (injected by Snakemake)
