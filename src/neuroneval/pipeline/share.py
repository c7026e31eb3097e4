"""Sharing a build through DVC together with Snakemake's bookkeeping (``make pull``, the ``dvc.yaml`` stages).

DVC shares the files; Snakemake decides reruns from its metadata (``.snakemake/metadata``: one record per output
with the params, code digest, input list and input checksums it was made with), which DVC does not carry. A clone
that pulled the files but not the records cannot see that a param changed since they were made ("Nothing to be
done" where the building tree plans jobs). So every DVC stage ends with :func:`export_metadata`, which writes the
records of the stage's outputs to ``snakemake-metadata/<stage>.json`` — a DVC output of the stage, pushed and pulled
with its files — and :func:`pull` restores them:

1. ``dvc pull --allow-missing``: whatever the remote has; a stage it lacks is reported, not an error;
2. :func:`import_metadata`: each pulled record goes back to ``.snakemake/metadata`` (only for outputs present);
3. ``snakemake --touch`` on the targets of the complete stages: DVC restores files in no particular order, and
   directories (the worlds, the language models) have no checksum, so their timestamps are put in DAG order. No
   job runs and no byte changes.

Afterwards the pulled tree plans exactly the jobs the pushing tree plans, for the same params and for changed ones.
Run ``python -m neuroneval.pipeline.share pull`` (what ``make pull`` does) or ``... export <stage>``.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from neuroneval import io

METADATA_DIR = Path(".snakemake") / "metadata"
"""Snakemake's per-output records, relative to the working directory."""
SHARED_DIR = Path("snakemake-metadata")
"""Where each stage's exported records live (``<stage>.json``, a DVC output of the stage)."""
SHOWN_OUTPUTS = 4
"""Missing outputs named per partly pulled stage in :meth:`PullReport.summary`."""


@dataclass(frozen=True)
class PullReport:
    """Outcome of :func:`pull`: stages whose outputs are all here, stages with missing outputs (and which),
    and how many Snakemake records were restored."""

    complete: tuple[str, ...]
    missing: Mapping[str, tuple[str, ...]]
    restored_records: int
    declared: Mapping[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        """What a user reads after ``make pull``: a stage lacking all its outputs is named with their count, one
        lacking some with the first few of them."""
        lines = [f"pulled stages: {', '.join(self.complete) or 'none'} ({self.restored_records} Snakemake records "
                 "restored)"]
        if self.missing:
            lines.append("not on the remote (build them with `make repro` or `dvc repro <stage>`, then `dvc push`):")
            for stage, outputs in self.missing.items():
                if len(outputs) == self.declared.get(stage, -1) and len(outputs) > 1:
                    lines.append(f"  {stage}: all {len(outputs)} outputs")
                else:
                    shown = ", ".join(outputs[:SHOWN_OUTPUTS])
                    more = f" and {len(outputs) - SHOWN_OUTPUTS} more" if len(outputs) > SHOWN_OUTPUTS else ""
                    lines.append(f"  {stage}: {shown}{more}")
        return "\n".join(lines)


def stages(dvc_yaml: str | Path) -> dict[str, dict[str, Any]]:
    """The stages of a ``dvc.yaml``, in file order."""
    path = Path(dvc_yaml)
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ValueError(f"{path}: cannot read the DVC stages ({error})") from error
    if not isinstance(document, dict) or not isinstance(document.get("stages"), dict):
        raise ValueError(f"{path}: no `stages:` mapping")
    return document["stages"]


def stage_outputs(stage: Mapping[str, Any]) -> list[str]:
    """A stage's declared outputs (``outs`` entries, plain or with options), without its metadata export."""
    outputs = [next(iter(entry)) if isinstance(entry, dict) else str(entry) for entry in stage.get("outs", [])]
    return [output for output in outputs if Path(output).parts[:1] != SHARED_DIR.parts]


def stage_targets(stage: Mapping[str, Any]) -> list[str]:
    """The Snakemake targets of a stage whose command is ``snakemake <targets> [&& ...]``."""
    words = str(stage.get("cmd", "")).split("&&")[0].split()
    if not words or words[0] != "snakemake":
        raise ValueError(f"stage command {stage.get('cmd')!r} does not start with `snakemake <targets>`")
    return [word for word in words[1:] if not word.startswith("-")]


def recorded_output(record: Path, metadata_dir: Path) -> str:
    """The output path a Snakemake metadata file records: its path under ``metadata_dir`` is the URL-safe base64
    of the output path, a long one split into directories whose names start with ``@``."""
    encoded = "".join(part.removeprefix("@") for part in record.relative_to(metadata_dir).parts)
    return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()


def _under(path: str, outputs: Sequence[str]) -> bool:
    return any(path == output or path.startswith(output.rstrip("/") + "/") for output in outputs)


def export_metadata(workdir: str | Path, stage: str, *, dvc_yaml: str | Path = "dvc.yaml") -> Path:
    """Write the Snakemake records of ``stage``'s outputs to ``snakemake-metadata/<stage>.json``.

    The file maps each record's path under ``.snakemake/metadata`` to its text, sorted, so that
    :func:`import_metadata` writes back exactly the files Snakemake wrote. Raises ``ValueError`` naming the stage
    when it has no records (the stage was not built by Snakemake in this directory).
    """
    workdir = Path(workdir)
    all_stages = stages(workdir / dvc_yaml)
    if stage not in all_stages:
        raise ValueError(f"{dvc_yaml}: no stage {stage!r} (stages: {', '.join(all_stages)})")
    outputs = stage_outputs(all_stages[stage])
    metadata_dir = workdir / METADATA_DIR
    records = {}
    for record in sorted(metadata_dir.rglob("*")) if metadata_dir.is_dir() else []:
        if record.is_file() and _under(recorded_output(record, metadata_dir), outputs):
            records[record.relative_to(metadata_dir).as_posix()] = record.read_text()
    if not records:
        raise ValueError(f"stage {stage!r}: no Snakemake records under {metadata_dir} for its outputs "
                         f"{', '.join(outputs)}; build it with Snakemake first")
    target = workdir / SHARED_DIR / f"{stage}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    io.write_text(target, json.dumps(records, indent=0, sort_keys=True) + "\n")
    return target


def import_metadata(workdir: str | Path) -> int:
    """Restore the records of every ``snakemake-metadata/*.json`` whose output is present; return how many.

    A record of an output that is not here (its stage was only partly pulled) is skipped, so Snakemake treats
    that output as missing, as it is.
    """
    workdir = Path(workdir)
    metadata_dir = workdir / METADATA_DIR
    restored = 0
    for shared in sorted((workdir / SHARED_DIR).glob("*.json")):
        try:
            records = json.loads(shared.read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{shared}: not a metadata export ({error})") from error
        for name, text in records.items():
            target = metadata_dir / name
            if not (workdir / recorded_output(target, metadata_dir)).exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            io.write_text(target, text)
            restored += 1
    return restored


def missing_outputs(workdir: str | Path, *, dvc_yaml: str | Path = "dvc.yaml") -> dict[str, tuple[str, ...]]:
    """Per stage, its declared outputs that are not in ``workdir`` (empty tuple: complete)."""
    workdir = Path(workdir)
    return {name: tuple(output for output in stage_outputs(stage) if not (workdir / output).exists())
            for name, stage in stages(workdir / dvc_yaml).items()}


def pull(workdir: str | Path = ".", *, dvc: str = "dvc", snakemake: str = "snakemake",
         dvc_yaml: str | Path = "dvc.yaml") -> PullReport:
    """``dvc pull --allow-missing``, restore the Snakemake records, order timestamps with ``snakemake --touch``
    on the complete stages' targets (see the module docstring). Raises ``RuntimeError`` when a command fails."""
    workdir = Path(workdir)
    _run([dvc, "pull", "--allow-missing"], workdir)
    missing = missing_outputs(workdir, dvc_yaml=dvc_yaml)
    restored = import_metadata(workdir)
    all_stages = stages(workdir / dvc_yaml)
    complete = tuple(name for name, absent in missing.items() if not absent)
    targets = list(dict.fromkeys(target for name in complete for target in stage_targets(all_stages[name])))
    if targets:
        _run([snakemake, "--touch", "--cores", "1", *targets], workdir)
    return PullReport(complete, {name: absent for name, absent in missing.items() if absent}, restored,
                      {name: len(stage_outputs(stage)) for name, stage in all_stages.items()})


def _run(command: Sequence[str], workdir: Path) -> None:
    result = subprocess.run(list(command), cwd=workdir, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"`{' '.join(command)}` failed in {workdir}:\n{(result.stdout + result.stderr)[-3000:]}")


def main(argv: Sequence[str] | None = None) -> None:
    """``export <stage>`` (end of each DVC stage) or ``pull`` (``make pull``)."""
    parser = argparse.ArgumentParser(prog="python -m neuroneval.pipeline.share", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write snakemake-metadata/<stage>.json")
    export.add_argument("stage")
    pulling = commands.add_parser("pull", help="dvc pull what the remote has, restore Snakemake's records")
    pulling.add_argument("--dvc", default="dvc")
    pulling.add_argument("--snakemake", default="snakemake")
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "export":
            print(f"wrote {export_metadata('.', arguments.stage)}")
        else:
            print(pull(".", dvc=arguments.dvc, snakemake=arguments.snakemake).summary())
    except (ValueError, RuntimeError) as error:
        raise SystemExit(f"error: {error}") from error


if __name__ == "__main__":
    main()
