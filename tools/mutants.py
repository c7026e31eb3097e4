"""Mutation testing of the modules that decide results, with Cosmic Ray (docs/mutation_testing.md).

Each module is mutated alone and only the test files mapped to it in :data:`MODULE_TESTS` run against each mutant
(``pytest -x``: the first failing test kills it), so a module costs (its mutants) × (its tests' run time).
Mutants are applied to a scratch copy of the repository's files (``.mutants/tree``), never to the working tree,
so editing and testing here while a run goes on is safe. One Cosmic Ray session per module is kept in
``.mutants/<module>.sqlite``; ``tools/mutants_report.py`` turns the sessions into a markdown table.

    python tools/mutants.py                    # every module of MODULE_TESTS
    python tools/mutants.py --changed          # modules (or their mapped tests) changed since main's merge-base
    python tools/mutants.py src/neuroneval/metrics/binarize.py   # named modules only
    python tools/mutants.py --resume ...       # go on with the pending mutants of existing sessions
    python tools/mutants.py --recheck ...      # re-test only the survivors of existing sessions (after new tests)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Sessions, the scratch tree and the run log live here (git-ignored).
WORK_DIR = ROOT / ".mutants"

#: Decisive module → the test files that cover it (the tests a mutant of that module must fail).
MODULE_TESTS: dict[str, tuple[str, ...]] = {
    # metric kernels and binarization
    "src/neuroneval/metrics/binarize.py": (
        "tests/metrics/test_binarize_rules.py",
        "tests/metrics/test_top_alpha_rules.py",
        "tests/metrics/test_sort_stability.py",
    ),
    "src/neuroneval/metrics/confusion.py": ("tests/metrics/test_oracles.py", "tests/metrics/test_common.py"),
    "src/neuroneval/metrics/correlation.py": ("tests/metrics/test_oracles.py", "tests/metrics/test_common.py"),
    "src/neuroneval/metrics/wpmi_mad.py": ("tests/metrics/test_oracles.py", "tests/metrics/test_common.py"),
    "src/neuroneval/metrics/topandrandom.py": (
        "tests/metrics/test_oracles.py",
        "tests/metrics/test_paper_scale_paths.py",
    ),
    # ranks and ties
    "src/neuroneval/metrics/ranks.py": ("tests/metrics/test_sort_stability.py", "tests/metrics/test_top_alpha_rules.py",
                                        "tests/metrics/test_reference_mode.py"),
    # meta-AUPRC and its α/λ search
    "src/neuroneval/meta/auprc.py": ("tests/meta/test_table4_and_auprc.py", "tests/meta/test_interval_coverage.py"),
    "src/neuroneval/meta/search.py": (
        "tests/meta/test_meta_defaults_and_ties.py",
        "tests/meta/test_table4_and_auprc.py",
    ),
    # sanity tests
    "src/neuroneval/sanity/theoretical.py": ("tests/sanity/test_theoretical.py", "tests/sanity/test_analytical.py",
                                             "tests/sanity/test_theoretical_reference.py"),
    "src/neuroneval/sanity/analytical.py": (
        "tests/sanity/test_analytical.py",
        "tests/sanity/test_theoretical_reference.py",
    ),
    "src/neuroneval/sanity/experimental.py": ("tests/sanity/test_experimental.py",),
    "src/neuroneval/sanity/perturb.py": ("tests/sanity/test_perturb.py", "tests/sanity/test_experimental.py"),
    "src/neuroneval/sanity/delta.py": ("tests/sanity/test_delta.py",),
    # crowd estimators, intervals and task pages
    "src/neuroneval/crowd/estimator.py": (
        "tests/crowd/test_sampling_estimator.py",
        "tests/crowd/test_estimator_edges.py",
    ),
    "src/neuroneval/crowd/sampling.py": ("tests/crowd/test_sampling_estimator.py",),
    "src/neuroneval/crowd/aggregation.py": ("tests/crowd/test_aggregation_raters.py",),
    "src/neuroneval/crowd/ingest.py": ("tests/crowd/test_design_ingest.py", "tests/crowd/test_interval_coverage.py"),
    "src/neuroneval/crowd/gold.py": ("tests/crowd/test_real_study.py",),
    "src/neuroneval/crowd/task_pages.py": ("tests/crowd/test_task_pages.py", "tests/crowd/test_task_page_alignment.py"),
    # CoSy scoring, explanation simulation, fidelity verdicts
    "src/neuroneval/cosy/scoring.py": ("tests/cosy/test_scoring.py",),
    "src/neuroneval/explain/simulate.py": ("tests/explain/test_simulate.py", "tests/explain/test_evaluate.py"),
    **{f"src/neuroneval/fidelity/claims/{name}.py": ("tests/fidelity/test_claims.py",
                                                     "tests/fidelity/test_verdict_rules.py")
       for name in ("common", "paper_000_ranking", "paper_000_sanity", "paper_001", "paper_002", "paper_004")},
    "src/neuroneval/fidelity/claims/paired.py": ("tests/fidelity/test_paired.py",),
}


def module_slug(module: str) -> str:
    """``src/neuroneval/metrics/binarize.py`` → ``metrics.binarize`` (the session's file name)."""
    return ".".join(Path(module).relative_to("src/neuroneval").with_suffix("").parts)


def session_path(module: str) -> Path:
    return WORK_DIR / f"{module_slug(module)}.sqlite"


def changed_modules(base: str = "main") -> list[str]:
    """Mapped modules whose file or mapped tests differ from ``git merge-base HEAD base`` (committed or not)."""
    merge_base = subprocess.run(["git", "merge-base", "HEAD", base], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.strip()
    diff = subprocess.run(["git", "diff", "--name-only", merge_base], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.split()
    untracked = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=ROOT, check=True,
                               capture_output=True, text=True).stdout.split()
    changed = set(diff) | set(untracked)
    return [module for module, tests in MODULE_TESTS.items() if module in changed or changed.intersection(tests)]


def copy_tree(target: Path) -> None:
    """Fresh copy of the tracked and untracked-but-not-ignored files of the working tree into ``target``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout.split("\0")
    if target.exists():
        shutil.rmtree(target)
    for relative in filter(None, listed):
        source = ROOT / relative
        if source.is_file():
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / relative)


def test_command(tests: tuple[str, ...]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]


def write_config(tree: Path, module: str, tests: tuple[str, ...], timeout: float) -> Path:
    """The Cosmic Ray session config of one module (local distributor, run inside the scratch tree)."""
    command = " ".join(test_command(tests))
    config = tree / f".cosmic-ray.{module_slug(module)}.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        f"timeout = {timeout:.1f}\n"
        "excluded-modules = []\n"
        f'test-command = "{command}"\n\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )
    return config


def run_module(module: str, tree: Path, *, resume: bool, log) -> None:
    """Baseline the module's tests unmutated, then init (unless resuming) and execute its session."""
    tests = MODULE_TESTS[module]
    missing = [test for test in tests if not (tree / test).exists()]
    if missing:
        raise SystemExit(f"{module}: mapped test files missing: {missing} (edit MODULE_TESTS in tools/mutants.py)")
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    started = time.monotonic()
    baseline = subprocess.run(test_command(tests), cwd=tree, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if baseline.returncode != 0:
        raise SystemExit(f"{module}: its tests fail unmutated:\n{baseline.stdout[-3000:]}")
    # A mutant that loops forever counts as killed (timeout); 4× the clean run leaves room for a busy machine.
    config = write_config(tree, module, tests, timeout=max(60.0, 4.0 * seconds))
    session = session_path(module)
    cosmic_ray = [sys.executable, "-m", "cosmic_ray.cli"]
    digest = hashlib.sha256((tree / module).read_bytes()).hexdigest()
    stamp = session.with_suffix(".sha256")
    if not (resume and session.exists() and stamp.exists() and stamp.read_text() == digest):
        subprocess.run([*cosmic_ray, "init", "--force", str(config), str(session)], cwd=tree, env=env, check=True)
        stamp.write_text(digest)
    log(f"{module}: baseline {seconds:.1f} s, tests {' '.join(tests)}")
    subprocess.run([*cosmic_ray, "exec", str(config), str(session)], cwd=tree, env=env, check=True)
    log(f"{module}: done after {time.monotonic() - started:.0f} s")


def recheck_survivors(module: str, tree: Path, *, log) -> None:
    """Run the survivors of ``module``'s session again against its mapped tests as they are now, recording the
    new outcomes in the session (a survivor that a new test kills becomes killed). Uses its own scratch tree, so
    it may run beside a session that is still executing."""
    from cosmic_ray.mutating import mutate_and_test
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome

    tests = MODULE_TESTS[module]
    os.environ["PYTHONPATH"] = str(tree / "src")
    command = " ".join(test_command(tests))
    with use_db(str(session_path(module)), WorkDB.Mode.open) as database:
        survivors = [item for item, result in database.completed_work_items
                     if result.test_outcome == TestOutcome.SURVIVED]
        here = Path.cwd()
        os.chdir(tree)
        try:
            for item in survivors:
                database.set_result(item.job_id, mutate_and_test(item.mutations, command, 600.0))
        finally:
            os.chdir(here)
    log(f"{module}: re-tested {len(survivors)} survivor(s) with {' '.join(tests)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="module paths (default: every module of MODULE_TESTS)")
    parser.add_argument("--changed", action="store_true", help="only modules changed since main's merge-base")
    parser.add_argument("--base", default="main", help="branch whose merge-base --changed compares with")
    parser.add_argument("--resume", action="store_true", help="keep existing sessions of unchanged modules")
    parser.add_argument("--recheck", action="store_true", help="re-test only the survivors of existing sessions")
    args = parser.parse_args(argv)
    unknown = [module for module in args.modules if module not in MODULE_TESTS]
    if unknown:
        parser.error(f"not in MODULE_TESTS of tools/mutants.py: {unknown}")
    modules = args.modules or (changed_modules(args.base) if args.changed else list(MODULE_TESTS))
    if not modules:
        print("no mapped module changed; nothing to mutate")
        return 0
    WORK_DIR.mkdir(exist_ok=True)
    tree = WORK_DIR / ("recheck" if args.recheck else "tree")
    copy_tree(tree)
    with open(WORK_DIR / "run.log", "a") as log_file:
        def log(line: str) -> None:
            print(line, flush=True)
            log_file.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {line}\n")
            log_file.flush()

        for module in modules:
            if args.recheck:
                recheck_survivors(module, tree, log=log)
            else:
                run_module(module, tree, resume=args.resume, log=log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
