"""``neuroneval evaluate`` at issue 30's size: 10,000 inputs × 512 units × 5 explanation files, on 2 cores.

Usage: ``python benchmarks/bench_evaluate.py [--inputs 10000] [--units 512] [--concepts 200] [--sources 5]
[--n-boot 1000] [--unit-n-boot 20] [--naive-units 8]``.

The concepts are independent binary labels (so no ``optimum`` row); each unit is one concept plus noise, each
source explains every unit with one concept, a two-concept formula or a three-term linear form. The batched path
(:func:`neuroneval.explain.evaluate.evaluate`, every (unit, source) column of a resample scored by one engine call
per metric) is set against a naive reference: a Python loop over units and sources that scores each column alone
with the same resamples (:func:`neuroneval.explain.simulate.simulation_metrics` on one column), timed on
``--naive-units`` units and extrapolated linearly to all of them. Wall time depends on what else runs on the
machine, so the CPU time of the process and the load average are printed beside it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from neuroneval.explain.benchmark import holdout_mask
from neuroneval.explain.evaluate import EvaluateOptions, evaluate
from neuroneval.explain.simulate import simulate_table, simulation_metrics, to_unit_interval


def example(n_inputs: int, n_units: int, n_concepts: int, n_sources: int) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                    dict[str, pd.DataFrame]]:
    rng = np.random.default_rng(0)
    labels = (rng.random((n_inputs, n_concepts)) < 0.05).astype(np.float32)
    names = [f"c{t}" for t in range(n_concepts)]
    truth = rng.integers(0, n_concepts, n_units)
    units = labels[:, truth] + 0.5 * rng.normal(size=(n_inputs, n_units)).astype(np.float32)
    activations = pd.DataFrame(units, columns=[f"u{k}" for k in range(n_units)])
    activations.insert(0, "input_id", np.arange(n_inputs))
    concepts = pd.DataFrame(labels, columns=names)
    concepts.insert(0, "input_id", np.arange(n_inputs))
    sources = {}
    for index in range(n_sources):
        picked = np.where(rng.random(n_units) < 0.5, truth, rng.integers(0, n_concepts, n_units))
        other = rng.integers(0, n_concepts, n_units)
        form = index % 3
        if form == 0:
            texts, kind, length = [names[t] for t in picked], "concept", [1] * n_units
        elif form == 1:
            texts = [names[t] if t == o else f"{names[t]} OR {names[o]}" for t, o in zip(picked, other, strict=True)]
            kind, length = "formula", [1 if t == o else 2 for t, o in zip(picked, other, strict=True)]
        else:
            texts = [f"2*{names[t]}" if t == o else f"2*{names[t]} + 0.5*{names[o]} - 0.1"
                     for t, o in zip(picked, other, strict=True)]
            kind, length = "linear", [1 if t == o else 2 for t, o in zip(picked, other, strict=True)]
        sources[f"source{index}"] = pd.DataFrame({"unit": activations.columns[1:], "explanation": texts,
                                                  "length": length, "kind": kind})
    return activations, concepts, sources


def naive_seconds(activations: pd.DataFrame, concepts: pd.DataFrame, sources: dict[str, pd.DataFrame],
                  options: EvaluateOptions, n_units: int) -> float:
    """Per-unit loop reference on the first ``n_units`` units of every source: each column scored alone on the
    point estimate and on every input resample."""
    held = holdout_mask(len(activations), options.holdout, options.seed)
    names = list(concepts.columns[1:])
    values = concepts[names].to_numpy(dtype=np.float64)[held]
    started = time.perf_counter()
    for frame in sources.values():
        for row in range(n_units):
            single = frame.iloc[[row]]
            actual = activations[[single["unit"].iloc[0]]].to_numpy(dtype=np.float64)[held]
            simulated = to_unit_interval(simulate_table(single, values, names))
            simulation_metrics(actual, simulated)
            rng = np.random.default_rng([options.seed, 1])
            for _ in range(options.unit_n_boot):
                rows = rng.integers(0, len(actual), size=len(actual))
                simulation_metrics(actual[rows], simulated[rows])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--units", type=int, default=512)
    parser.add_argument("--concepts", type=int, default=200)
    parser.add_argument("--sources", type=int, default=5)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--unit-n-boot", type=int, default=20)
    parser.add_argument("--naive-units", type=int, default=8)
    arguments = parser.parse_args()
    activations, concepts, sources = example(arguments.inputs, arguments.units, arguments.concepts, arguments.sources)
    options = EvaluateOptions(n_boot=arguments.n_boot, unit_n_boot=arguments.unit_n_boot)
    started, cpu_started = time.perf_counter(), time.process_time()
    result = evaluate(activations, concepts, sources, options=options)
    batched, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    naive = naive_seconds(activations, concepts, sources, options, arguments.naive_units)
    extrapolated = naive * arguments.units / arguments.naive_units
    print(f"evaluate: {arguments.inputs} inputs x {arguments.units} units x {arguments.sources} explanation files "
          f"({result.n_held_out} held out, {len(result.metrics) + 1} scores, n_boot {arguments.n_boot}, "
          f"unit_n_boot {arguments.unit_n_boot}): {batched:.1f} s wall, {cpu:.1f} s CPU (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(f"naive per-unit loop: {naive:.1f} s on {arguments.naive_units} units per source, extrapolated "
          f"{extrapolated:.0f} s for {arguments.units}; ratio {extrapolated / batched:.1f}x")


if __name__ == "__main__":
    main()
