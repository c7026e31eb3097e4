"""CoSy (paper 002): evaluate textual explanations of units with synthetic images from a text-to-image model.

Generators (:mod:`.generators`, keeping the contract of :mod:`.image_generator`) turn an explanation, put in a
prompt template (:mod:`.prompts`), into images; :mod:`.synthesis` stores them as resumable,
order-independent image sets with a manifest; :mod:`.scoring` compares a unit's activations on them with its
activations on control images (AUC Eq. 3, MAD Eq. 4, Mann–Whitney p-value).
"""

from neuroneval.cosy.generators import DiffusersGenerator, OracleGenerator, build_generator
from neuroneval.cosy.image_generator import ImageGenerator, config_hash, image_seed
from neuroneval.cosy.prompts import DEFAULT_TEMPLATE, TEMPLATES, fill_template, strip_template

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
