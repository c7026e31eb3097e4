"""CoSy (paper 002): evaluate textual explanations of units with synthetic images from a text-to-image model.

Generators (:mod:`.generators`) turn an explanation into images; :mod:`.synthesis` stores them as resumable,
order-independent image sets with a manifest; :mod:`.scoring` compares a unit's activations on them with its
activations on control images (AUC Eq. 3, MAD Eq. 4, Mann–Whitney p-value).
"""

from neuroneval.cosy.generators import (
    DEFAULT_TEMPLATE,
    TEMPLATES,
    DiffusersGenerator,
    ImageGenerator,
    OracleGenerator,
    build_generator,
    config_hash,
    fill_template,
    image_seed,
    strip_template,
)

__all__ = [
    "DEFAULT_TEMPLATE",
    "TEMPLATES",
    "DiffusersGenerator",
    "ImageGenerator",
    "OracleGenerator",
    "build_generator",
    "config_hash",
    "fill_template",
    "image_seed",
    "strip_template",
]
