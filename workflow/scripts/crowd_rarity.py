"""Snakemake entry point: see neuroneval.pipeline.crowd_steps.crowd_rarity."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.crowd_steps import crowd_rarity

run_step(crowd_rarity, snakemake)  # noqa: F821 (injected by Snakemake)
