"""The module names of the classifiers trained in the DAG, without building them: no torch, timm or torchvision.

:func:`classifier_layer_names` gives the names ``model.named_modules()`` yields (the unnamed root left out, in the
same order) for a model that :func:`neuroneval.models.classifier.build_classifier` builds from an architecture and
its params config: the layers whose activations can be recorded. The params check (:mod:`neuroneval.params.check`)
validates every setting's layer against them before Snakemake plans a job, and building the model there imported
torch, timm and torchvision (seconds) on every Snakemake invocation. The names follow from the architecture:

* ``tiny_cnn`` (:class:`~neuroneval.models.cnn.TinyCNN`): ``block1``–``block3`` (conv, batch norm, ReLU, and a max
  pooling in the first two), ``pool``, ``fc``;
* ``tiny_cbm`` (:class:`~neuroneval.models.cbm.ConceptBottleneck`): ``features`` (the three blocks, pooling and
  flattening), ``concepts``, ``concept_probabilities``, ``fc``;
* ``tiny_vit`` (timm's ``VisionTransformer``, :mod:`neuroneval.models.vit`): ``config["depth"]`` blocks
  ``blocks.<i>``, the only key of the config that changes a name, between the patch embedding and the head.

``tests/test_params_check.py`` builds each architecture with the configs the params allow (with torch) and
compares the names, so the two cannot drift (timm is pinned in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: ``DEFAULT_VIT_CONFIG["depth"]`` of :mod:`neuroneval.models.vit`, the blocks of a ``tiny_vit`` whose config does
#: not set ``depth`` (compared with a real build in the tests).
TINY_VIT_DEFAULT_DEPTH = 3
#: The children of a timm ``Block`` (pre-norm attention and MLP with layer scale and drop path), in order.
_VIT_BLOCK_CHILDREN = (
    "norm1", "attn", "attn.qkv", "attn.q_norm", "attn.k_norm", "attn.attn_drop", "attn.norm", "attn.proj",
    "attn.proj_drop", "ls1", "drop_path1", "norm2", "mlp", "mlp.fc1", "mlp.act", "mlp.drop1", "mlp.norm", "mlp.fc2",
    "mlp.drop2", "ls2", "drop_path2",
)


def _conv_block(name: str, *, pool: bool) -> list[str]:
    """A TinyCNN block (``nn.Sequential``): conv, batch norm, ReLU and, if ``pool``, max pooling."""
    return [name, *(f"{name}.{index}" for index in range(4 if pool else 3))]


def _tiny_cnn(config: Mapping[str, Any]) -> list[str]:
    return [*_conv_block("block1", pool=True), *_conv_block("block2", pool=True),
            *_conv_block("block3", pool=False), "pool", "fc"]


def _tiny_cbm(config: Mapping[str, Any]) -> list[str]:
    backbone = [*_conv_block("features.0", pool=True), *_conv_block("features.1", pool=True),
                *_conv_block("features.2", pool=False)]
    return ["features", *backbone, "features.3", "features.4", "concepts", "concept_probabilities", "fc"]


def _tiny_vit(config: Mapping[str, Any]) -> list[str]:
    depth = config.get("depth", TINY_VIT_DEFAULT_DEPTH)
    blocks = [name for index in range(depth)
              for name in (f"blocks.{index}", *(f"blocks.{index}.{child}" for child in _VIT_BLOCK_CHILDREN))]
    return ["patch_embed", "patch_embed.proj", "patch_embed.norm", "pos_drop", "patch_drop", "norm_pre", "blocks",
            *blocks, "norm", "fc_norm", "head_drop", "head"]


#: Architecture (``models.vision.<name>.architecture``, ``digits.models.<name>.architecture``) → its module names.
_LAYER_NAMES: dict[str, Callable[[Mapping[str, Any]], list[str]]] = {
    "tiny_cnn": _tiny_cnn,
    "tiny_vit": _tiny_vit,
    "tiny_cbm": _tiny_cbm,
}


def classifier_layer_names(architecture: str, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The module names of ``build_classifier(architecture, config)`` (``named_modules()`` without the root), in
    order, computed from ``config`` (the params config of the architecture) alone.

    >>> classifier_layer_names("tiny_cnn", {"width": 8})[-2:]
    ('pool', 'fc')
    >>> [name for name in classifier_layer_names("tiny_vit", {"depth": 2}) if name.count(".") == 1][:3]
    ['patch_embed.proj', 'patch_embed.norm', 'blocks.0']
    """
    if architecture not in _LAYER_NAMES:
        raise ValueError(f"unknown architecture {architecture!r}; expected one of {tuple(_LAYER_NAMES)}")
    return tuple(_LAYER_NAMES[architecture](config))
