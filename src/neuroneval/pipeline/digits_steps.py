"""Steps of the digits world (workflow/rules/digits.smk): only the world itself is new.

The digits classifier, its activation tables and the label concept table are built by the vision world's steps
(:func:`~neuroneval.pipeline.steps.train_vision_classifier`, ``vision_classifier_activations``,
``vision_label_concepts``) on the split this step writes in the vision world's format.
"""

from __future__ import annotations

import json

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def digits_world(job: StepIO) -> None:
    """Write split ``{split}`` of scikit-learn's bundled digits (``digits:`` params) to a directory, whole."""
    from neuroneval.worlds import save_vision_world
    from neuroneval.worlds.digits import build_digits_world

    knobs = job.params.digits
    world = build_digits_world(job.wildcards.split, seed=knobs["seed"], probe_fraction=knobs["probe_fraction"],
                               hierarchy=knobs["hierarchy"])
    print(json.dumps({key: world.params[key] for key in ("source", "source_sha256", "split", "n_images")}))
    with io.atomic_directory(job.output[0]) as staging:
        save_vision_world(world, staging)
