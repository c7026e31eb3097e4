"""Embedded probing worlds built by the workflow itself.

The vision world (:mod:`neuroneval.worlds.vision`) renders images with known objects, attributes, per-pixel
masks, a class hierarchy and captions; :mod:`~neuroneval.worlds.render` draws them,
:mod:`~neuroneval.worlds.vision_concepts` says what they mean, :mod:`neuroneval.figures.world_preview` shows them.
"""

from neuroneval.worlds.vision import (
    VisionWorld,
    build_vision_world,
    concept_mask,
    load_vision_world,
    save_vision_world,
)

__all__ = ["VisionWorld", "build_vision_world", "concept_mask", "load_vision_world", "save_vision_world"]
