"""Options of CoSy (paper 002): the ``cosy:`` block of params.yaml, parsed once and validated.

The workflow step parses the block (``CosyOptions.from_params(job.params.cosy)``) and the library reads fields:

- :class:`CosyOptions`: settings, generators, the main image sets (``n_images`` under ``template``), controls;
- :class:`CosyTemplatesOptions` (``cosy.templates``): the prompt-template study (Fig. 2, Table 5);
- :class:`CosySeedsOptions` (``cosy.seeds``): the seed-stability study (Table 8);
- :class:`CosyDistributionsOptions` (``cosy.distributions``): the activation-distribution figure;
- :class:`CosyGenerativeOptions` (``cosy.generative``): paper 000's generative concept source (Table 1, App. B.1);
- :class:`EmbeddedDiffusionOptions` (``cosy.embedded``): the embedded diffusion model's
  :class:`EmbeddedTrainingOptions` and :class:`EmbeddedSamplingOptions`;
- :class:`DiffusersOptions` (``cosy.diffusers``): any local diffusers text-to-image pipeline.

Defaults are those of params.yaml. Values are kept as given (no int/float coercion), so what a step writes from
them (the embedded model card, generator configs) stays what it was when the block travelled as a mapping.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from neuroneval.options import Options, OptionsError, check_choice, check_fraction, check_range, check_text

#: Image sources of CoSy: the world renderer, the diffusion model trained here, any diffusers pipeline.
GENERATOR_NAMES = ("oracle", "embedded", "diffusers")
#: Torch dtypes a diffusers pipeline may run in.
DiffusersDtype = Literal["float32", "float16", "bfloat16"]
DIFFUSERS_DTYPES: tuple[DiffusersDtype, ...] = get_args(DiffusersDtype)
#: Metric-engine scores compared between complete and generative concept vectors (params.yaml's list).
DEFAULT_GENERATIVE_METRICS = (
    "recall", "precision", "f1", "iou", "accuracy", "balanced_accuracy", "inverse_balanced_accuracy", "auc",
    "inverse_auc", "correlation", "spearman", "cosine", "wpmi", "mad", "auprc", "inverse_auprc",
)


def _check_texts(owner: Options, name: str, *, non_empty: bool = True) -> None:
    values = getattr(owner, name)
    if not isinstance(values, tuple | list) or (non_empty and not values) \
            or not all(isinstance(value, str) and value for value in values):
        raise OptionsError(f"{type(owner).__name__}.{name} must be a {'non-empty ' if non_empty else ''}list of "
                           f"non-empty strings, got {values!r}")


def _check_optional(owner: Options, name: str, low: float) -> None:
    if getattr(owner, name) is not None:
        check_range(owner, name, low, integer=True)


@dataclass(frozen=True)
class CosyTemplatesOptions(Options):
    """The prompt-template comparison (002 Fig. 2, Table 5): ``names``, the templates compared (keys of
    :data:`~neuroneval.cosy.prompts.TEMPLATES` or texts with ``{concept}``), on the first ``n_concepts`` true
    explanations, each against ``n_natural`` natural probing images of its class (contrastive similarity)."""

    names: tuple[str, ...] = ("a", "painting", "photo", "realistic", "closeup")
    n_concepts: int = 6
    n_natural: int = 50

    def validate(self) -> None:
        _check_texts(self, "names")
        check_range(self, "n_concepts", 0, integer=True)
        check_range(self, "n_natural", 1, integer=True)


@dataclass(frozen=True)
class CosySeedsOptions(Options):
    """Seed stability (002 Table 8): the first ``n_units`` true explanations regenerated under every seed of
    ``generation_seeds`` (each image's seed hashes the generation seed, the prompt and the image index)."""

    generation_seeds: tuple[int, ...] = tuple(range(10))
    n_units: int = 3

    def validate(self) -> None:
        seeds = self.generation_seeds
        if not isinstance(seeds, tuple | list) or not seeds or not all(
                isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 for seed in seeds):
            raise OptionsError(f"CosySeedsOptions.generation_seeds must be a non-empty list of integers >= 0, "
                               f"got {seeds!r}")
        check_range(self, "n_units", 0, integer=True)


@dataclass(frozen=True)
class CosyDistributionsOptions(Options):
    """The activation-distribution figure: the first ``n_units`` units of each setting, each with its first
    ``n_control`` control activations beside its activations on the true and random explanations' images."""

    n_units: int = 4
    n_control: int = 1000

    def validate(self) -> None:
        check_range(self, "n_units", 0, integer=True)
        check_range(self, "n_control", 1, integer=True)


@dataclass(frozen=True)
class CosyGenerativeOptions(Options):
    """Paper 000's generative concept source (Table 1, App. B.1): the synthetic images appended to the probing set
    of the ``settings`` named, ``c_t = 1`` on them; ``metrics`` scored on the complete and the generative concept
    vectors, with top-``alpha`` binarisation and WPMI's ``lam``; a metric whose normalised change stays within
    ``tolerance`` counts as stable (blind to the missing labels)."""

    settings: tuple[str, ...] = ("vit_final_gt",)
    metrics: tuple[str, ...] = DEFAULT_GENERATIVE_METRICS
    alpha: float = 0.01
    lam: float = 1.0
    tolerance: float = 0.05

    def validate(self) -> None:
        _check_texts(self, "settings", non_empty=False)
        _check_texts(self, "metrics")
        check_fraction(self, "alpha", high_open=True)
        check_range(self, "lam", 0)
        check_range(self, "tolerance", 0)


@dataclass(frozen=True)
class EmbeddedTrainingOptions(Options):
    """Training of the embedded text-conditional diffusion model (:func:`~neuroneval.cosy.embedded_diffusion.
    train_embedded_diffusion`).

    Model: ``image_size`` pixels per side (the world's images); a UNet with ``block_out_channels`` per resolution
    level, ``layers_per_block`` ResNet blocks per level, text cross-attention at the levels flagged in
    ``attention_levels`` (same length), ``attention_head_dim`` channels per head, ``norm_num_groups`` GroupNorm
    groups; DDPM with ``num_train_timesteps`` steps under ``beta_schedule``.
    Optimisation: ``epochs`` passes over the world's images, ``batch_size`` images per step, one-cycle AdamW
    peaking at ``learning_rate`` with ``weight_decay``; ``seed`` fixes initialisation, noise, timesteps, batch
    order and text choices.
    Texts: each image's caption with probability ``caption_fraction``, else its leaf-class prompt with
    probability ``class_prompt_fraction``, else an attribute prompt; wrapped in a prompt template with
    probability ``template_fraction``; the empty text with probability ``cond_dropout`` (the unconditional
    model of classifier-free guidance).
    """

    image_size: int = 32
    block_out_channels: tuple[int, ...] = (32, 64, 64)
    layers_per_block: int = 1
    attention_levels: tuple[bool, ...] = (False, False, False)
    attention_head_dim: int = 8
    norm_num_groups: int = 8
    num_train_timesteps: int = 1000
    beta_schedule: str = "squaredcos_cap_v2"
    epochs: int = 2
    batch_size: int = 64
    learning_rate: float = 0.002
    weight_decay: float = 0.0
    seed: int = 0
    cond_dropout: float = 0.1
    caption_fraction: float = 0.5
    class_prompt_fraction: float = 0.25
    template_fraction: float = 0.3

    def validate(self) -> None:
        for name in ("image_size", "layers_per_block", "attention_head_dim", "norm_num_groups",
                     "num_train_timesteps", "epochs", "batch_size"):
            check_range(self, name, 1, integer=True)
        channels, levels = self.block_out_channels, self.attention_levels
        if not isinstance(channels, tuple | list) or not channels or not all(
                isinstance(width, int) and not isinstance(width, bool) and width >= 1 for width in channels):
            raise OptionsError(f"EmbeddedTrainingOptions.block_out_channels must be a non-empty list of positive "
                               f"integers, got {channels!r}")
        if not isinstance(levels, tuple | list) or not all(isinstance(flag, bool) for flag in levels):
            raise OptionsError(f"EmbeddedTrainingOptions.attention_levels must be a list of booleans, got {levels!r}")
        if len(levels) != len(channels):
            raise OptionsError(f"EmbeddedTrainingOptions.attention_levels ({len(levels)}) and block_out_channels "
                               f"({len(channels)}) differ in length")
        check_text(self, "beta_schedule")
        check_range(self, "learning_rate", 0, low_open=True)
        check_range(self, "weight_decay", 0)
        check_range(self, "seed", 0, integer=True)
        for name in ("cond_dropout", "caption_fraction", "class_prompt_fraction", "template_fraction"):
            check_fraction(self, name, low_open=False)
        if self.caption_fraction + self.class_prompt_fraction > 1.0:
            raise OptionsError("EmbeddedTrainingOptions.caption_fraction + class_prompt_fraction must be <= 1, got "
                               f"{self.caption_fraction!r} + {self.class_prompt_fraction!r}")

    def to_config(self) -> dict[str, Any]:
        """The fields as a JSON-able mapping (lists for tuples), as the checkpoint's model card records them."""
        return {key: list(value) if isinstance(value, tuple) else value
                for key, value in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class EmbeddedSamplingOptions(Options):
    """Sampling of the embedded model: ``steps`` DDIM steps, classifier-free ``guidance_scale`` (1 = conditional
    only, 0 = unconditional), ``batch_size`` images per denoising call (part of the images' config), on the
    torch ``device``."""

    steps: int = 25
    guidance_scale: float = 6.0
    batch_size: int = 64
    device: str = "cpu"

    def validate(self) -> None:
        check_range(self, "steps", 1, integer=True)
        check_range(self, "guidance_scale", 0)
        check_range(self, "batch_size", 1, integer=True)
        check_text(self, "device")


@dataclass(frozen=True)
class EmbeddedDiffusionOptions(Options):
    """The embedded text-conditional diffusion model: how it is trained and how it generates."""

    training: EmbeddedTrainingOptions = field(default_factory=EmbeddedTrainingOptions)
    sampling: EmbeddedSamplingOptions = field(default_factory=EmbeddedSamplingOptions)


@dataclass(frozen=True)
class DiffusersOptions(Options):
    """Any diffusers text-to-image pipeline (never downloaded).

    ``model``: a local ``save_pretrained`` folder (or a hub id already in the local cache; empty = not set);
    ``steps`` denoising steps at classifier-free ``guidance_scale``; ``height``/``width`` output pixels (``None``:
    the pipeline's default); ``dtype`` one of :data:`DIFFUSERS_DTYPES` (half precision on GPUs only);
    ``batch_size`` prompts per pipeline call; ``device`` ``auto`` (CUDA if available), ``cpu``, ``cuda`` or
    ``cuda:<index>``; ``local_files_only`` never touches the network; ``negative_prompt`` for every image.
    """

    model: str = ""
    steps: int = 30
    guidance_scale: float = 5.0
    height: int | None = None
    width: int | None = None
    dtype: DiffusersDtype = "float32"
    batch_size: int = 4
    device: str = "auto"
    local_files_only: bool = True
    negative_prompt: str | None = None

    def validate(self) -> None:
        if not isinstance(self.model, str):
            raise OptionsError(f"DiffusersOptions.model must be a string, got {self.model!r}")
        check_range(self, "steps", 1, integer=True)
        check_range(self, "guidance_scale", 0)
        _check_optional(self, "height", 8)
        _check_optional(self, "width", 8)
        check_choice(self, "dtype", DIFFUSERS_DTYPES)
        check_range(self, "batch_size", 1, integer=True)
        check_text(self, "device")
        if not isinstance(self.local_files_only, bool):
            raise OptionsError(f"DiffusersOptions.local_files_only must be a boolean, got {self.local_files_only!r}")
        if self.negative_prompt is not None and not isinstance(self.negative_prompt, str):
            raise OptionsError(f"DiffusersOptions.negative_prompt must be a string or null, "
                               f"got {self.negative_prompt!r}")


@dataclass(frozen=True)
class CosyOptions(Options):
    """The ``cosy:`` block: CoSy on the ``settings`` named (one activation table each), with images from each of
    ``generators`` (:data:`GENERATOR_NAMES`).

    ``clip``: the contrastive model (``models.contrastive``) embedding images for the template study;
    ``max_units``: units per setting (a seed-hashed subset shared across settings; ``None`` = all);
    ``n_images``: synthetic images per explanation and generation seed, under the prompt ``template``;
    ``batch_size``: images per ``generate()`` call (the images do not depend on it); ``n_control``: control
    images = the first ``n_control`` of the probing split (``None`` = all); ``seed``: the unit subset and the
    random explanations. The nested blocks configure the studies and the generators.
    """

    settings: tuple[str, ...] = ("vit_final_gt", "cnn_final_gt")
    generators: tuple[str, ...] = ("oracle", "embedded")
    clip: str = "clip"
    max_units: int | None = 30
    n_images: int = 20
    template: str = "closeup"
    batch_size: int = 64
    n_control: int | None = None
    seed: int = 0
    templates: CosyTemplatesOptions = field(default_factory=CosyTemplatesOptions)
    seeds: CosySeedsOptions = field(default_factory=CosySeedsOptions)
    distributions: CosyDistributionsOptions = field(default_factory=CosyDistributionsOptions)
    generative: CosyGenerativeOptions = field(default_factory=CosyGenerativeOptions)
    embedded: EmbeddedDiffusionOptions = field(default_factory=EmbeddedDiffusionOptions)
    diffusers: DiffusersOptions = field(default_factory=DiffusersOptions)

    def validate(self) -> None:
        _check_texts(self, "settings")
        _check_texts(self, "generators")
        unknown = [name for name in self.generators if name not in GENERATOR_NAMES]
        if unknown:
            raise OptionsError(f"CosyOptions.generators must be among {list(GENERATOR_NAMES)}, got {unknown[0]!r}")
        check_text(self, "clip")
        _check_optional(self, "max_units", 1)
        check_range(self, "n_images", 1, integer=True)
        check_text(self, "template")
        check_range(self, "batch_size", 1, integer=True)
        _check_optional(self, "n_control", 1)
        check_range(self, "seed", 0, integer=True)

    def generator_options(self, name: str) -> GeneratorOptions:
        """The options block of generator ``name`` (``None`` for the oracle, which renders the world's params)."""
        return generator_options(name, getattr(self, name, None) if name != "oracle" else None)


GeneratorOptions = EmbeddedDiffusionOptions | DiffusersOptions | None


def generator_options(name: str, params: Any = None) -> GeneratorOptions:
    """Generator ``name``'s options from its block (``cosy.<name>``, a mapping or options already parsed):
    :class:`EmbeddedDiffusionOptions`, :class:`DiffusersOptions`, or ``None`` for the oracle (no block).

    Raises :class:`OptionsError` for an unknown generator name or a block the oracle cannot take.
    """
    kinds: dict[str, type[Options]] = {"embedded": EmbeddedDiffusionOptions, "diffusers": DiffusersOptions}
    if name == "oracle":
        if params:
            raise OptionsError(f"the oracle generator takes no options, got {params!r}")
        return None
    if name not in kinds:
        raise OptionsError(f"unknown generator {name!r}; choose one of {list(GENERATOR_NAMES)}")
    kind = kinds[name]
    return params if isinstance(params, kind) else kind.from_params(params)
