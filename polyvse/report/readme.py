"""The numbers of the README and its result pages, written from a run's results and nothing else.

A default run's tables are kept in the repository as a *snapshot*
(``docs/default_run/``: every top-level ``results/*.tsv`` / ``*.md`` and the run's
time from ``logs/runs.tsv``). The result blocks of the pages in :data:`PAGES` (the README's headline,
``docs/results.md``'s tables and findings, ``docs/benchmarks.md``'s times) are a pure function of
that snapshot: each sits between ``<!-- results:NAME:start -->`` and
``<!-- results:NAME:end -->`` and is rewritten by :func:`fill_pages`; a test
fails when a page and the snapshot disagree, and ``check`` fails when a fresh
run's ``results/`` is not the snapshot's result: a table beyond the tolerance a run on
another CPU needs, or a finding's verdict changed (:mod:`polyvse.report.comparison`).


A run of the scale config's data stages and pretraining (``config/scale/m30k.yaml``, too long
for a session's whole DAG) is kept the same way in ``docs/scale_run/``: its invocations, its
jobs' benchmarks, the pretraining's usage of the latent tokens and the data statistics.

Usage, after ``snakemake --cores all`` on the default config::

    python -m polyvse.report.readme snapshot   # results/ (tables, learning/ curves) + logs/runs.tsv -> docs/default_run/
    python -m polyvse.report.readme write      # docs/default_run/ + docs/scale_run/ -> the PAGES' blocks
    python -m polyvse.report.readme check      # does results/ equal docs/default_run/ (within the tolerance)?

and in the working directory of a scale run::

    python -m polyvse.report.readme scale-snapshot --workdir /path/to/scale/run   # -> docs/scale_run/

and after a GPU session's ``bench/cuda_session.sh`` (:mod:`polyvse.report.gpu_runs`)::

    python -m polyvse.report.readme gpu-keep --out /path/to/its/files --commit REV   # -> docs/gpu_runs/
"""

from __future__ import annotations

import argparse
import io
import posixpath
import re
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

from polyvse.errors import InputError
from polyvse.io import temporary_sibling, write_text
from polyvse.report.benchmarks import (
    benchmark_summary,
    cpu_by_rule,
    gather_benchmarks,
    peak_rss_by_rule,
    startup_by_rule,
)
from polyvse.report.comparison import EQUAL, TOLERANCE, RunComparison, compare_runs, same_file
from polyvse.report.gpu_runs import GpuRunError, gpu_runs_block, keep_run
from polyvse.report.provenance import other_training_inputs, read_provenance


BLOCK = re.compile(r"<!-- results:(?P<name>[\w.-]+):start -->\n(?P<body>.*?)<!-- results:(?P=name):end -->", re.S)
# the pages `write` fills, relative to the repository root: the README keeps a run's headline (its time, which
# models learned, what a first query finds); the tables and findings, and the times, have pages of their own
PAGES: tuple[str, ...] = ("README.md", "docs/results.md", "docs/benchmarks.md")
# a Markdown link's target that is a path in the repository (not a URL, an anchor of the same page or absolute)
LINK = re.compile(r"\]\((?P<target>(?![a-z][a-z0-9+.-]*:|#|/)[^)\s]+)\)")
SNAPSHOT_PATTERNS: tuple[str, ...] = ("*.tsv", "*.md")
RUN_FILE = "run.tsv"
# what the snapshot's run depended on and the hash of each result file (results/provenance/run.tsv): kept so that
# `python -m polyvse.report.provenance diff docs/default_run/provenance.tsv results/provenance/run.tsv` names the
# first stage where another machine's run differs, and what its environment changed; never compared as a table
PROVENANCE_FILE = "provenance.tsv"
# measured, not computed: never compared
TIMING_FILES = frozenset({"benchmarks.tsv", "benchmarks_by_rule.tsv", "benchmarks_by_family.tsv"})
# folders of figures below the results the snapshot keeps under the same name (docs/default_run/learning/: the
# validation curves results/learning.md points to), so that docs/ shows them; pictures, never compared
FIGURE_DIRS: tuple[str, ...] = ("learning",)


class ReadmeError(RuntimeError):
    """A README block, snapshot or results directory that does not fit."""


def fill_blocks(readme: str, blocks: Mapping[str, str]) -> str:
    """``readme`` with the body of every marked block replaced by ``blocks[name]``.

    Every marked block must have content and every content a block: a README
    that lost a marker, or a generator that lost a block, fails loudly.
    """
    found = [m.group("name") for m in BLOCK.finditer(readme)]
    missing = sorted(set(found) - set(blocks))
    unused = sorted(set(blocks) - set(found))
    if missing:
        raise ReadmeError(f"README blocks with no generated content: {', '.join(missing)}")
    if unused:
        raise ReadmeError(f"generated blocks with no marker in the README: {', '.join(unused)}")

    def body(m: re.Match) -> str:
        text = blocks[m.group("name")].rstrip("\n") + "\n"
        return f"<!-- results:{m.group('name')}:start -->\n{text}<!-- results:{m.group('name')}:end -->"

    return BLOCK.sub(body, readme)


def relative_links(text: str, page: str) -> str:
    """``text``, whose link targets are paths from the repository root, with each target written from the
    folder of ``page`` (a path from the root): the blocks are generated once and shown on several pages."""
    folder = posixpath.dirname(page) or "."
    return LINK.sub(lambda m: f"]({posixpath.relpath(m.group('target'), folder)})", text)


def fill_pages(pages: Mapping[str, str], blocks: Mapping[str, str]) -> dict[str, str]:
    """Each of ``pages`` (its path from the repository root → its text) with the body of every marked block
    replaced by ``blocks[name]``, its links written from the page's folder (:func:`relative_links`).

    A block may be shown on several pages. Every marked block must have content and every content a block on
    some page: a page that lost a marker, or a generator that lost a block, fails loudly.
    """
    found = {m.group("name") for text in pages.values() for m in BLOCK.finditer(text)}
    missing = sorted(found - set(blocks))
    unused = sorted(set(blocks) - found)
    if missing:
        raise ReadmeError(f"blocks with no generated content: {', '.join(missing)}")
    if unused:
        raise ReadmeError(f"generated blocks with no marker on any of {', '.join(pages)}: {', '.join(unused)}")
    filled = {}
    for page, text in pages.items():
        here = {m.group("name") for m in BLOCK.finditer(text)}
        filled[page] = fill_blocks(text, {n: relative_links(blocks[n], page) for n in here})
    return filled


def page_blocks(root: Path, blocks: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """What each of :data:`PAGES` under ``root`` shows in its blocks, by page and block name: ``blocks`` with
    their links written from the page's folder (what :func:`fill_pages` writes there)."""
    shown = {}
    for page in PAGES:
        names = read_blocks((root / page).read_text(encoding="utf-8"))
        shown[page] = {n: relative_links(blocks[n], page).rstrip("\n") + "\n" for n in names if n in blocks}
    return shown


def read_blocks(readme: str) -> dict[str, str]:
    """The bodies of the marked blocks of ``readme``, by name."""
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(readme)}


def _read(snapshot: Path, name: str) -> str:
    path = snapshot / name
    if not path.is_file():
        raise ReadmeError(f"{path}: missing from the snapshot (run the default DAG, then `snapshot`)")
    return path.read_text(encoding="utf-8")


def _hms(seconds: int) -> str:
    """Seconds as h:mm:ss."""
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def invocations(snapshot: Path) -> pd.DataFrame:
    """The snapshot's run record (``run.tsv``: one row an invocation of ``snakemake``, with started, finished,
    wall_s, commit, host)."""
    _read(snapshot, RUN_FILE)
    runs = pd.read_csv(snapshot / RUN_FILE, sep="\t", dtype={"finished": str})
    if runs["finished"].isna().all():
        raise ReadmeError(f"{snapshot / RUN_FILE}: no finished run recorded")
    return runs


def _wall_time(runs: pd.DataFrame, all_finished: str) -> str:
    """The wall time of ``runs``' invocations: ``all_finished`` after it when every one finished, else the
    count of those that did, and of those stopped before their end (no finished time, no wall time)."""
    done = runs[runs["finished"].notna()]
    wall = f"{_hms(int(done['wall_s'].sum()))} (h:mm:ss) of "
    stopped = len(runs) - len(done)
    if not stopped:
        return wall + all_finished
    were = "was" if stopped == 1 else "were"
    return (
        wall + f"wall time in the {len(done)} that finished; {stopped} {were} stopped before "
        f"{'its' if stopped == 1 else 'their'} end and left no wall time"
    )


def _commits(runs: pd.DataFrame) -> str:
    commits = list(dict.fromkeys(runs["commit"]))
    return f"commit{'s' if len(commits) > 1 else ''} {', '.join(f'`{c}`' for c in commits)}"


def run_summary(snapshot: Path) -> str:
    """One sentence on when the snapshot's run finished and how long its invocations took."""
    runs = invocations(snapshot)
    done = runs[runs["finished"].notna()]
    r = done.iloc[-1]
    if len(runs) == 1:
        return (
            f"Run finished {r['finished']} (UTC) from commit `{r['commit']}`; its last invocation of "
            f"`snakemake` took {_hms(int(r['wall_s']))} (h:mm:ss) on {r['host']}."
        )
    return (
        f"Run finished {r['finished']} (UTC) from {_commits(runs)} on {r['host']}: {len(runs)} invocations of "
        f"`snakemake` (a stopped run resumes), the first started {runs['started'].iloc[0]}, "
        f"{_wall_time(runs, 'their wall time in all')}."
    )


def speech_summary(snapshot: Path, reports: Mapping[str, str]) -> str:
    """Mean R@1 / R@10 over the image pairs (E&I, H&I, J&I) and the cross-lingual pairs
    (H&E, J&E, J&H) of every row of the speech tables ``reports`` (name → label)."""
    lines = [
        "| thesis table | row | image R@1 | image R@10 | cross-lingual R@1 | cross-lingual R@10 | best epoch |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for name, label in reports.items():
        table = pd.read_csv(snapshot / f"{name}.tsv", sep="\t")
        image = [c for c in table.columns if "&I." in c]
        cross = [c for c in table.columns if "." in c and c not in image]
        for _, r in table.iterrows():
            mean = {
                f"{kind}{k}": r[[c for c in cols if c.endswith(f".R{k}")]].astype(float).mean()
                for kind, cols in (("i", image), ("c", cross))
                for k in (1, 10)
            }
            lines.append(
                f"| {label} | {r['model']} | {mean['i1']:.1f} | {mean['i10']:.1f} | {mean['c1']:.1f} | "
                f"{mean['c10']:.1f} | {int(r['Ep'])} |"
            )
    return "\n".join(lines) + "\n"


def findings_block(snapshot: Path) -> str:
    """results/findings.md of the snapshot's run, its title dropped and its claims one heading level down."""
    text = _read(snapshot, "findings.md")
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join("#" + line if line.startswith("## ") else line for line in lines).strip("\n") + "\n"


def summary_paragraphs(snapshot: Path, name: str, n: int) -> list[str]:
    """The first ``n`` paragraphs under the title of the snapshot's page ``name`` (a report's summary);
    ReadmeError naming the file where it has no title or fewer paragraphs."""
    paragraphs = [p.strip() for p in _read(snapshot, name).split("\n\n") if p.strip()]
    if len(paragraphs) < n + 1 or not paragraphs[0].startswith("# "):
        raise ReadmeError(f"{snapshot / name}: no summary of {n} paragraph(s) under its title")
    return paragraphs[1 : n + 1]


def learning_block(snapshot: Path) -> str:
    """The learning overview's summary (results/learning.md's first paragraph: how many models learned and
    converged, which did not) and where its tables and curves are."""
    (summary,) = summary_paragraphs(snapshot, "learning.md", 1)
    where = f"{snapshot.parent.name}/{snapshot.name}"
    return (
        f"{summary} Each model's score beside its chance level, its best epoch and why it stopped: "
        f"[`{where}/learning.md`]({where}/learning.md); its validation curves, one figure a table, in "
        f"`{where}/learning/`.\n"
    )


def queries_block(snapshot: Path) -> str:
    """The described queries' mean precision and worst queries (results/described_queries.md's first two
    paragraphs under its title) and where the page is."""
    mean, worst = summary_paragraphs(snapshot, "described_queries.md", 2)
    where = f"{snapshot.parent.name}/{snapshot.name}/described_queries.md"
    return f"{mean} {worst} Every query: [`{where}`]({where}).\n"


def rule_table(by_rule: pd.DataFrame) -> list[str]:
    """Markdown rows of a per-rule benchmark summary (:func:`polyvse.report.benchmarks.benchmark_summary`)."""
    lines = [
        "| rule | jobs | wall s | share % | median s | longest s | peak RSS MB | CPU s | start-up s |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for _, r in by_rule.iterrows():
        lines.append(
            f"| `{r['rule']}` | {int(r['jobs'])} | {r['seconds']:.0f} | {r['share']:.1f} | "
            f"{r['median_seconds']:.1f} | {r['max_seconds']:.1f} | {r['max_rss_mb']:.0f} | "
            f"{r['cpu_seconds']:.0f} | {r['startup_seconds']:.0f} |"
        )
    return lines


FAMILY_NAMES = {
    "embn": "EmbN",
    "parallel_embn": "PARALLEL-EmbN",
    "mule": "MULE",
    "la": "LA",
    "hem": "HEM",
    "smalr": "SMALR",
    "liwe": "LIWE",
    "speech": "grounded speech",
    "joint": "joint (speech, text, image)",
    "mlmme": "MLMME",
    "translator": "Translator",
}


def family_table(by_family: pd.DataFrame) -> list[str]:
    """Markdown rows of the CPU time per family (:func:`polyvse.report.benchmarks.cpu_by_family`)."""
    lines = ["| what the jobs do | jobs | CPU min | share of the CPU % |", "|---|--:|--:|--:|"]
    for _, r in by_family.iterrows():
        name = FAMILY_NAMES.get(r["family"], r["family"])
        lines.append(f"| {name} | {int(r['jobs'])} | {r['cpu_seconds'] / 60:.1f} | {r['cpu_share']:.1f} |")
    return lines


def benchmarks_summary(snapshot: Path) -> str:
    """The run's job time per rule (results/benchmarks_by_rule.tsv of the snapshot's run), the
    share of it that is the jobs' start-up, and its CPU time per family (benchmarks_by_family.tsv)."""
    by_rule = pd.read_csv(io.StringIO(_read(snapshot, "benchmarks_by_rule.tsv")), sep="\t")
    total, cpu, startup = by_rule["seconds"].sum(), by_rule["cpu_seconds"].sum(), by_rule["startup_seconds"].sum()
    lines = [
        f"{int(by_rule['jobs'].sum())} jobs, {total / 60:.1f} minutes of job wall time (the Snakemake "
        "`benchmark:` files of the jobs that wrote one, gathered by the `benchmarks` rule into "
        f"`results/benchmarks.tsv`) and {cpu / 60:.1f} of CPU time (each job's own measure, its log's last line, "
        "as its peak RSS: Snakemake samples both every 30 s and misses the end of a job); "
        f"{startup / 60:.1f} minutes of the wall time, {100 * startup / total:.1f} %, the jobs' start-up "
        "(interpreter, Snakemake's script preamble, imports: each job log's first line):",
        "",
        *rule_table(by_rule),
    ]
    if (snapshot / "benchmarks_by_family.tsv").is_file():
        by_family = pd.read_csv(io.StringIO(_read(snapshot, "benchmarks_by_family.tsv")), sep="\t")
        lines += [
            "",
            f"Its {by_family['cpu_seconds'].sum() / 60:.1f} CPU minutes of the jobs with a benchmark file, by what the jobs do "
            "(`results/benchmarks_by_family.tsv`; a family's trainings, those of its seed replicas among them):",
            "",
            *family_table(by_family),
        ]
    return "\n".join(lines) + "\n"


SPEECH_TABLES: dict[str, str] = {
    "speech_table3_1": "3.1 hypersphere λ_u",
    "speech_table3_2": "3.2 objectives",
    "speech_table3_3": "3.3 MHSA pooling",
    "speech_table3_4": "3.4 Transformer / MHSA options",
    "speech_table4_1": "4.1 multiview frameworks",
    "speech_table5_1": "5.1 shared encoders",
}

BLOCKS: dict[str, Callable[[Path], str]] = {
    "run": run_summary,
    "table2": lambda s: _read(s, "table2.md"),
    "mule_table2": lambda s: _read(s, "mule_table2.md"),
    "learning": learning_block,
    "queries": queries_block,
    "findings": lambda s: findings_block(s),
    "table1": lambda s: _read(s, "table1.md"),
    "speech_summary": lambda s: speech_summary(s, SPEECH_TABLES),
    "mlmme_table1": lambda s: _read(s, "mlmme_table1.md"),
    "any_to_any": lambda s: _read(s, "any_to_any.md"),
    "data_stats": lambda s: _read(s, "data_stats.md"),
    "benchmarks": benchmarks_summary,
}


def scale_run_summary(snapshot: Path) -> str:
    """One sentence on the scale run's invocations: commits, first start, last end, their wall time."""
    runs = invocations(snapshot)
    done = runs[runs["finished"].notna()]
    return (
        f"The scale run: {len(runs)} invocation{'s' if len(runs) > 1 else ''} of `snakemake` from {_commits(runs)}, "
        f"started {runs['started'].iloc[0]} and finished {done['finished'].iloc[-1]} (UTC), "
        f"{_wall_time(runs, 'wall time in all')}, on {runs['host'].iloc[-1]}."
    )


def scale_benchmarks(snapshot: Path) -> str:
    """The scale run's job time per rule, from its gathered benchmark files."""
    by_rule = pd.read_csv(io.StringIO(_read(snapshot, "benchmarks_by_rule.tsv")), sep="\t")
    total, startup = by_rule["seconds"].sum(), by_rule["startup_seconds"].sum()
    lines = [
        f"{int(by_rule['jobs'].sum())} jobs, {total / 60:.1f} minutes of job wall time, "
        f"{100 * startup / total:.1f} % of it the jobs' start-up (`docs/scale_run/benchmarks.tsv`: every job):",
        "",
        *rule_table(by_rule),
    ]
    return "\n".join(lines) + "\n"


def _table_rows(files: list[Path], row: Callable[[Path, pd.Series], str]) -> list[str]:
    """One Markdown row per row of every TSV of ``files``, written by ``row(file, row)``."""
    return [row(path, r) for path in files for _, r in pd.read_csv(path, sep="\t").iterrows()]


def scale_usage(snapshot: Path) -> str:
    """How the words of each scale pretraining spread over its latent tokens ({dataset}.{name}_usage.tsv)."""
    files = sorted(snapshot.glob("*_usage.tsv"))
    if not files:
        raise ReadmeError(f"{snapshot}: no pretraining usage (*_usage.tsv) in the snapshot")
    lines = []
    for path in files:
        name = path.name.removesuffix("_usage.tsv")
        epochs = snapshot / f"{name}_epochs.tsv"
        if epochs.is_file():
            lines += [
                f"`{name}`, epoch {int(r['epoch'])}: {r['seconds'] / 60:.1f} minutes, validation cross-lingual "
                f"retrieval {r['val_score']:.2f}, {int(r['tokens_used']):,} tokens used."
                for _, r in pd.read_csv(epochs, sep="\t").iterrows()
            ]
    lines += [
        *([""] if lines else []),
        "| pretraining | scope | words | tokens used | largest token: words | share % | normalised entropy | "
        "effective tokens |",
        "|---|---|--:|--:|--:|--:|--:|--:|",
    ]
    lines += _table_rows(
        files,
        lambda path, r: (
            f"| {path.name.removesuffix('_usage.tsv')} | {r['scope']} | {int(r['words']):,} | "
            f"{int(r['tokens_used']):,} | {int(r['largest_token_words']):,} | "
            f"{100 * r['largest_token_share']:.2f} | {r['normalised_entropy']:.3f} | {r['effective_tokens']:,.0f} |"
        ),
    )
    return "\n".join(lines) + "\n"


def scale_data_stats(snapshot: Path) -> str:
    """The scale run's training captions per language ({dataset}.data_stats.tsv), as the default's table."""
    files = sorted(snapshot.glob("*.data_stats.tsv"))
    if not files:
        raise ReadmeError(f"{snapshot}: no data statistics (*.data_stats.tsv) in the snapshot")
    lines = [
        "| dataset | lang | captions | train tokens | types | seen once % | seen ≤ 2 % | test OOV % | slope |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
        *_table_rows(
            files,
            lambda _, r: (
                f"| {r['dataset']} | {r['lang']} | {int(r['captions']):,} | {int(r['train_tokens']):,} | "
                f"{int(r['types']):,} | {100 * r['hapax_share']:.1f} | {100 * r['at_most_2_share']:.1f} | "
                f"{100 * r['test_oov_rate']:.2f} | {r['rank_freq_slope']:.2f} |"
            ),
        ),
    ]
    return "\n".join(lines) + "\n"


SCALE_BLOCKS: dict[str, Callable[[Path], str]] = {
    "scale_run": scale_run_summary,
    "scale_benchmarks": scale_benchmarks,
    "scale_usage": scale_usage,
    "scale_data_stats": scale_data_stats,
}


def readme_blocks(snapshot: Path, scale_snapshot: Path | None = None) -> dict[str, str]:
    """Every README block generated from ``snapshot`` (the default run) and ``scale_snapshot`` (the scale
    run; by default ``scale_run/`` beside ``snapshot``)."""
    scale = scale_snapshot if scale_snapshot is not None else snapshot.parent / "scale_run"
    return (
        {name: make(snapshot) for name, make in BLOCKS.items()}
        | {name: make(scale) for name, make in SCALE_BLOCKS.items()}
        | {"gpu_runs": gpu_runs_block(snapshot.parent / "gpu_runs")}
    )


def take_scale_snapshot(workdir: Path, snapshot: Path) -> list[str]:
    """Replace ``snapshot`` with what the scale run in ``workdir`` measured: its invocations
    (``logs/runs.tsv``), every job's benchmark and their sums per rule (``benchmarks/``, the
    start-up from the job logs), and per dataset the pretrainings' usage of the latent tokens,
    the data statistics and the MT quality (``results/{dataset}/``). Returns the files' names."""
    runs = workdir / "logs" / "runs.tsv"
    if not runs.is_file():
        raise ReadmeError(f"{runs}: no finished run recorded")
    jobs, logs = gather_benchmarks(workdir / "benchmarks"), workdir / "logs"
    if jobs.empty:
        raise ReadmeError(f"{workdir / 'benchmarks'}: no benchmark files")
    tables = {
        RUN_FILE: pd.read_csv(runs, sep="\t"),
        "benchmarks.tsv": jobs,
        "benchmarks_by_rule.tsv": benchmark_summary(
            jobs, startup_by_rule(logs), cpu_by_rule(logs), peak_rss_by_rule(logs)
        ),
    }
    results = workdir / "results"
    copies = pretraining_usage_files(results)
    copies |= {
        f"{p.parts[-4]}.{p.parent.name.removesuffix('.checkpoint')}_epochs.tsv": p
        for p in results.glob("*/pretrain/*.checkpoint/epochs.tsv")
    }
    copies |= {
        f"{p.parent.name}.{p.name}": p
        for name in ("data_stats.tsv", "mt_quality.tsv")
        for p in results.glob(f"*/{name}")
    }
    staging = temporary_sibling(snapshot, "", directory=True)  # written beside, then renamed onto it
    try:
        for name, table in tables.items():
            table.to_csv(staging / name, sep="\t", index=False)
        for name, path in copies.items():
            shutil.copyfile(path, staging / name)
        if snapshot.exists():
            shutil.rmtree(snapshot)
        staging.rename(snapshot)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted([*tables, *copies])


def snapshot_files(results: Path) -> list[Path]:
    """The top-level tables and plotted numbers of a run, sorted."""
    return sorted(p for pattern in SNAPSHOT_PATTERNS for p in results.glob(pattern) if p.is_file())


def pretraining_usage_files(results: Path) -> dict[str, Path]:
    """Each dataset's pretrainings' usage of their latent tokens (``{dataset}/pretrain/{name}_usage.tsv``), by
    the name the snapshot keeps it under (``{dataset}.{name}_usage.tsv``): a collapse of one language onto a
    few tokens shows in no table but leaves LA unable to learn that language (docs/learning.md)."""
    return {f"{p.parts[-3]}.{p.name}": p for p in sorted(results.glob("*/pretrain/*_usage.tsv"))}


def snapshot_figures(results: Path) -> list[Path]:
    """The figures of :data:`FIGURE_DIRS` in a run's results, sorted."""
    return sorted(p for name in FIGURE_DIRS for p in (results / name).glob("*.png") if p.is_file())


def take_snapshot(results: Path, runs: Path, snapshot: Path) -> list[Path]:
    """Replace ``snapshot`` with the tables of ``results``, its pretrainings' usage of their latent tokens
    (:func:`pretraining_usage_files`), its figures of :data:`FIGURE_DIRS` (in folders of the same names) and
    every row of ``runs`` (the invocations of ``snakemake`` in the run's directory: a run resumed over several
    is one run); returns the files copied."""
    files = snapshot_files(results)
    if not files:
        raise ReadmeError(f"{results}: no tables (run `snakemake --cores all` first)")
    if not runs.is_file():
        raise ReadmeError(f"{runs}: no finished run recorded")
    if snapshot.exists():
        shutil.rmtree(snapshot)
    snapshot.mkdir(parents=True)
    for f in files:
        shutil.copyfile(f, snapshot / f.name)
    usage = pretraining_usage_files(results)
    for name, f in usage.items():
        shutil.copyfile(f, snapshot / name)
    figures = snapshot_figures(results)
    for f in figures:
        (snapshot / f.parent.name).mkdir(exist_ok=True)
        shutil.copyfile(f, snapshot / f.parent.name / f.name)
    pd.read_csv(runs, sep="\t").to_csv(snapshot / RUN_FILE, sep="\t", index=False)
    provenance = results / "provenance" / "run.tsv"
    if provenance.is_file():
        shutil.copyfile(provenance, snapshot / PROVENANCE_FILE)
    return files + list(usage.values()) + figures


def _compared_files(results: Path, snapshot: Path) -> tuple[dict[str, Path], dict[str, Path]]:
    """The snapshot's tables and the run's by name; timings (:data:`TIMING_FILES`) are left out: they differ
    between any two runs, as the snapshot's run record and provenance (never tables)."""
    kept = {p.name: p for p in snapshot_files(snapshot) if p.name not in TIMING_FILES | {RUN_FILE, PROVENANCE_FILE}}
    fresh = {p.name: p for p in snapshot_files(results) if p.name not in TIMING_FILES | {RUN_FILE, PROVENANCE_FILE}}
    return kept, fresh | pretraining_usage_files(results)


def training_inputs(results: Path, snapshot: Path) -> str | None:
    """None where the run of ``results`` trained on the snapshot's inputs (or either lacks its provenance
    record, written last), else what differs (:func:`polyvse.report.provenance.other_training_inputs`)."""
    run, kept = results / "provenance" / "run.tsv", snapshot / PROVENANCE_FILE
    if not (run.is_file() and kept.is_file()):
        return None
    return other_training_inputs(read_provenance(kept), read_provenance(run))


def compare_with_snapshot(results: Path, snapshot: Path, tolerance: float = TOLERANCE) -> RunComparison:
    """The tables of ``results`` against ``snapshot``'s, each equal, within ``tolerance`` or not, the
    findings' verdicts and which models learned, on the snapshot's inputs or others
    (:func:`polyvse.report.comparison.compare_runs`)."""
    kept, fresh = _compared_files(results, snapshot)
    return compare_runs(kept, fresh, tolerance, inputs=training_inputs(results, snapshot))


def differing_files(results: Path, snapshot: Path) -> list[str]:
    """Names of the tables that are not equal between ``results`` and ``snapshot`` (or exist in one only;
    numbers compared to :data:`polyvse.report.comparison.RTOL`), timings left out."""
    kept, fresh = _compared_files(results, snapshot)
    return sorted(
        name
        for name in set(fresh) | set(kept)
        if name not in fresh or name not in kept or not same_file(fresh[name], kept[name])
    )


def check(results: Path, snapshot: Path, tolerance: float = TOLERANCE) -> int:
    """Print how the tables of ``results`` compare with ``snapshot``'s; 0 where the run passes (on the
    snapshot's inputs: every table equal or within ``tolerance``, every verdict and learned the same; on
    others: the same tables, data statistics and learned), 1 otherwise."""
    found = compare_with_snapshot(results, snapshot, tolerance)
    print(
        f"{results} against {snapshot} (snapshot → run; numbers within {tolerance:g} points count as the same result):"
    )
    for line in found.report():
        print(f"  {line}")
    if not found.passes:
        files, verdicts = found.failing()
        what = [f"{f.name} ({f.status})" for f in files]
        what += [f"the verdict of {v.claim}" for v in verdicts]
        what += [f"whether {v.claim} learned" for v in found.learned]
        print(f"{results} and {snapshot} differ: {', '.join(what)}", file=sys.stderr)
        return 1
    if found.inputs is not None:
        held = "the same tables, data statistics and learned models"
        print(f"{results} has {held} as {snapshot}, from other inputs")
        return 0
    exact = all(f.status == EQUAL for f in found.files) and not found.learned
    print(f"{results} equals {snapshot}" if exact else f"{results} equals {snapshot} within {tolerance:g}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m polyvse.report.readme", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["snapshot", "write", "check", "scale-snapshot", "gpu-keep"])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--runs", type=Path, default=Path("logs/runs.tsv"))
    parser.add_argument(
        "--snapshot", type=Path, default=None, help="default: docs/default_run (scale-snapshot: docs/scale_run)"
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="write: the repository whose PAGES to fill")
    parser.add_argument("--workdir", type=Path, default=Path("."), help="scale-snapshot: the scale run's directory")
    parser.add_argument("--out", type=Path, help="gpu-keep: the files a bench/cuda_session.sh run left in $OUT")
    parser.add_argument("--commit", help="gpu-keep: the commit the run's working tree was")
    parser.add_argument("--date", help="gpu-keep: the run's date (default: session.txt's first line)")
    parser.add_argument(
        "--tolerance",
        type=float,
        default=TOLERANCE,
        help=f"check: the largest difference of a number that is the same result (default {TOLERANCE:g} points)",
    )
    args = parser.parse_args(argv)
    if args.snapshot is None:
        args.snapshot = Path("docs/scale_run" if args.command == "scale-snapshot" else "docs/default_run")
    try:
        if args.command == "gpu-keep":
            if args.out is None or not args.commit:
                raise ReadmeError("gpu-keep needs --out and --commit")
            date = args.date or (args.out / "session.txt").read_text(encoding="utf-8")[:10]
            print(f"kept in {keep_run(args.out, Path('docs/gpu_runs'), date, args.commit[:7])}")
        elif args.command == "scale-snapshot":
            names = take_scale_snapshot(args.workdir, args.snapshot)
            print(f"{len(names)} files written to {args.snapshot}")
        elif args.command == "snapshot":
            files = take_snapshot(args.results, args.runs, args.snapshot)
            print(f"{len(files)} tables and figures copied to {args.snapshot}")
        elif args.command == "write":
            pages = {page: (args.root / page).read_text(encoding="utf-8") for page in PAGES}
            for page, text in fill_pages(pages, readme_blocks(args.snapshot)).items():
                write_text(text, args.root / page)
            print(f"{', '.join(PAGES)}: result blocks rewritten from {args.snapshot}")
        else:
            return check(args.results, args.snapshot, args.tolerance)
    except (ReadmeError, GpuRunError, InputError, OSError) as e:
        print(f"polyvse: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
