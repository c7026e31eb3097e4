"""``neuroneval record``: record your model's units on your data into activation tables (docs/record.md).

The parser imports nothing heavy (the ``neuroneval`` command starts without torch); the work is in
:mod:`neuroneval.activations.record`.

One of ``--factory`` (with ``--weights``, ``--factory-kwargs``), ``--torchscript``, ``--export``,
``--hf-model`` or ``--model-spec`` names the model; one of ``--images``, ``--array``, ``--text`` the inputs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def add_record_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``record`` subcommand to the ``neuroneval`` parser."""
    parser = commands.add_parser("record", help="record a model's units (layers, tokens, SAE features) into tables",
                                 description=__doc__.split("\n")[0])
    add_model_arguments(parser.add_argument_group("model (one of)"))
    inputs = parser.add_argument_group("inputs (one of)")
    inputs.add_argument("--images", metavar="DIR", help="image folder (sorted relative paths; inputs.csv maps ids)")
    inputs.add_argument("--array", metavar="FILE", help=".npy array or .npz file, one row per input")
    inputs.add_argument("--array-key", help="the array of a .npz file holding several")
    inputs.add_argument("--text", metavar="PATH", help=".txt (one document per line), a folder of .txt files (one "
                                                       "per file) or a datasets save_to_disk folder")
    inputs.add_argument("--text-column", default="text", help="text column of a datasets folder (default text)")
    parser.add_argument("--layer", action="append", required=True, dest="layers",
                        help="module name (repeatable), or logits/softmax")
    parser.add_argument("--out", required=True, help="output folder: <layer>.parquet and side files")
    parser.add_argument("--pooling", default="mean", help="mean (default) or max: how conv and token maps become "
                                                          "one value per channel (images, arrays)")
    parser.add_argument("--sae", metavar="DIR", help="SAELens folder (cfg.json + sae_weights.safetensors): also "
                                                     "write <layer>.sae.parquet")
    parser.add_argument("--batch-size", type=int, default=32, help="inputs (documents for text) per batch")
    parser.add_argument("--context-length", type=int,
                        help="text: tokens kept per document (default: the model's maximum positions)")
    parser.add_argument("--max-positions", type=int, help="text: keep at most this many token positions")
    parser.add_argument("--position-sampling", choices=["random", "first"], default="random",
                        help="text: which positions --max-positions keeps (seeded uniform sample or the first N)")
    parser.add_argument("--image-size", type=int, help="resize images to this square size (models without their "
                                                      "own preprocessing)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, …")
    parser.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return parser


def add_model_arguments(model: Any) -> None:
    """The flags that name your model (one of them; :func:`model_spec`), shared by ``record`` and ``cosy``."""
    model.add_argument("--factory", metavar="PACKAGE.MODULE:CALLABLE",
                       help="import this callable and call it (with --factory-kwargs) to build the nn.Module")
    model.add_argument("--factory-kwargs", default="{}", metavar="JSON", help="keyword arguments of the factory")
    model.add_argument("--weights", help="state dict (.pt/.pth/.safetensors) loaded into the factory's module")
    model.add_argument("--torchscript", metavar="FILE", help="a torch.jit.save archive (logits/softmax only)")
    model.add_argument("--export", metavar="FILE", help="a torch.export.save file")
    model.add_argument("--hf-model", metavar="DIR", help="a transformers save_pretrained folder (local only)")
    model.add_argument("--hf-modality", choices=["text", "vision"], default="text",
                       help="--hf-model reads text (default; causal LM) or images (AutoModel)")
    model.add_argument("--model-spec", metavar="JSON",
                       help="a model spec (JSON text or .json file) of neuroneval.models.loaders.load_model, e.g. "
                            "{\"family\": \"torchvision\", \"arch\": \"resnet18\", \"weights_path\": \"r18.pth\"}")


def model_spec(arguments: argparse.Namespace) -> dict[str, Any]:
    """The model spec the flags describe; exactly one model flag must be given."""
    given = [flag for flag in ("factory", "torchscript", "export", "hf_model", "model_spec")
             if getattr(arguments, flag)]
    if len(given) != 1:
        raise ValueError(f"give exactly one of --factory, --torchscript, --export, --hf-model, --model-spec; got "
                         f"{['--' + flag.replace('_', '-') for flag in given] or 'none'}")
    if arguments.factory:
        try:
            kwargs = json.loads(arguments.factory_kwargs)
        except json.JSONDecodeError as error:
            raise ValueError(f"--factory-kwargs is not JSON: {error}") from error
        return {"family": "module", "factory": arguments.factory, "kwargs": kwargs, "weights_path": arguments.weights}
    if arguments.weights:
        raise ValueError("--weights goes with --factory")
    if arguments.torchscript:
        return {"family": "torchscript", "path": arguments.torchscript}
    if arguments.export:
        return {"family": "torch_export", "path": arguments.export}
    if arguments.hf_model:
        return {"family": "transformers", "model_dir": arguments.hf_model, "modality": arguments.hf_modality}
    text = arguments.model_spec
    path = Path(text).expanduser()
    try:
        return json.loads(path.read_text() if path.suffix == ".json" and path.is_file() else text)
    except json.JSONDecodeError as error:
        raise ValueError(f"--model-spec is neither JSON nor a .json file: {error}") from error


def run_record(arguments: argparse.Namespace) -> None:
    """Record what the flags name (:func:`neuroneval.activations.record.record_files`) and print what was written."""
    from neuroneval.activations.record import RecordOptions, record_files

    given = [flag for flag in ("images", "array", "text") if getattr(arguments, flag)]
    if len(given) != 1:
        raise ValueError(f"give exactly one of --images, --array, --text; got {['--' + f for f in given] or 'none'}")
    options = RecordOptions(layers=tuple(arguments.layers), pooling=arguments.pooling,
                            batch_size=arguments.batch_size, device=arguments.device,
                            max_positions=arguments.max_positions, position_sampling=arguments.position_sampling,
                            seed=arguments.seed, context_length=arguments.context_length,
                            text_column=arguments.text_column, array_key=arguments.array_key,
                            image_size=arguments.image_size, progress=arguments.progress)
    result = record_files(model_spec(arguments), given[0], getattr(arguments, given[0]), arguments.out, options,
                          sae_folder=arguments.sae)
    for name, path in result.tables.items():
        print(f"wrote {path} ({name}, {result.n_inputs} inputs)")
    for path in result.side_files.values():
        print(f"wrote {path}")
    if result.resumed:
        print(f"resumed: {result.resumed} batch(es) were done, {result.computed} computed")
