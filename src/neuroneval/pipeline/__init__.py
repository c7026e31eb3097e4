"""Glue between Snakemake rules and the library: each rule's script calls ``run_step(step, snakemake)``."""

from neuroneval.pipeline.runner import StepIO, run_step

__all__ = ["StepIO", "run_step"]
