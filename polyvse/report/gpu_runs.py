"""The GPU figures of docs/benchmarks.md, read from the logs of ``bench/cuda_session.sh`` runs.

Each run is kept in ``docs/gpu_runs/<date>_<commit>/`` as the script left it: ``session.txt`` (its
standard output: which steps ran, each one's exit status), ``device.txt`` (card, driver, torch) and
one ``<step>.log`` a step. :func:`gpu_runs_block` turns them into that page's table, so a GPU number
there is a line of a kept log, never typed; a step that ran out of its time limit is said so.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

RESULT = re.compile(r"^(?P<family>smalr|embn)\t(?P<fields>.*)$", re.M)
STEP_STATUS = re.compile(
    r"^== (?P<step>\w+) \([\d:]+, limit (?P<limit>\d+)s\)\nrc=(?P<rc>\d+) ?(?P<summary>(?:.*\n)*?)(?===|\Z)", re.M
)
SYNCS = re.compile(r"(?P<n>\d+) syncs in (?P<steps>\d+) steps")
PROFILE_WALL = re.compile(r"(?P<steps>\d+) steps: wall (?P<wall>[\d.]+) ms a step")
PROFILE_DEVICE = re.compile(r"Self CUDA time total: (?P<ms>[\d.]+)ms")
SPEECH = re.compile(r"^(?P<size>default|thesis)\s+(?P<pooling>\w+)\s+(?P<batch>\d+)\s+(?P<s>[\d.]+)$", re.M)
RULE = re.compile(r"^rule\t(?P<fields>.*)$", re.M)
RULES_WALL = re.compile(
    r"^data stages (?P<data>\d+) s, trainings (?P<train>\d+) s \(wall, (?P<cores>\d+) cores(?:, trainings on (?P<train_cores>\d+))?\)",
    re.M,
)
# a training job that Snakemake reports failed (143: stopped by the phase's time limit)
RULE_FAILED = re.compile(
    r"exit status (?P<rc>\d+)\.\n\[.*\]\nError in rule (?P<rule>\w+):\n(?:    .*\n)*?"
    r"    log: logs/(?P<dataset>[^/\s]+)/(?P<file>\S+)\.log",
    re.M,
)
TESTS = re.compile(r"^(?:(?P<failed>\d+) failed, )?(?P<passed>\d+) passed", re.M)
FAMILY = {"smalr": "SMALR", "embn": "EmbN"}
FULL_EPOCH = {"SMALR": 1612, "EmbN": 162}  # bench_scale_epoch.py's epochs: 1.45M and 145K sentences, 900 a batch
TABLES = {"fused": "dense (fused Adam)"}  # bench_scale_epoch.py --optimiser fused: no sparse tables
POOLING = {"avg": "average", "mhsa": "MHSA", "transformer": "Transformer"}


class GpuRunError(ValueError):
    """A kept GPU run that cannot be read."""


def _precision(amp: str) -> str:
    return "float32" if amp in ("off", "fp32") else f"{amp} autocast"


def _fields(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split("\t") if "=" in part)


def step_results(run: Path) -> list[tuple[str, str]]:
    """(what, result) for each step of one kept run, in the order the session ran them."""
    session = (run / "session.txt").read_text(encoding="utf-8")
    rows = []
    for m in STEP_STATUS.finditer(session):
        step, rc, limit = m["step"], int(m["rc"]), m["limit"]
        log_path = run / f"{step}.log"
        # the device machine returns 8 files a call: a step's log may stay behind, its result
        # lines (the script's grep of the log) are in session.txt
        log = log_path.read_text(encoding="utf-8") if log_path.is_file() else m["summary"]
        if RULE.search(log):  # bench/cuda_rules.sh: a row a training job
            rows.extend(_rule_rows(log))
            continue
        try:
            rows.append(_describe(step, rc, limit, log, run))
        except GpuRunError:
            if log_path.is_file():
                raise
            raise GpuRunError(f"{run}: session.txt names step {step} but {log_path.name} is not there") from None
    if not rows:
        raise GpuRunError(f"{run}/session.txt: no step ran")
    return rows


def _rule_rows(log: str) -> list[tuple[str, str]]:
    """The training jobs that bench/cuda_rules.sh ran through Snakemake, beside their CPU times."""
    wall = RULES_WALL.search(log)
    jobs = [_fields(m["fields"]) for m in RULE.finditer(log)]
    failed = [
        (f"{m['rule']} {m['dataset']}/{m['file'].removeprefix(m['rule'] + '_')}", int(m["rc"]))
        for m in RULE_FAILED.finditer(log)
    ]
    n = len(jobs) + len(failed)
    if wall and wall["train_cores"] == "1":
        side = ", one training job at a time"
    else:
        side = f", {n} training jobs side by side" + (f" on {wall['cores']} cores" if wall else "")
    rows = []
    for f in jobs:
        rule, job = f["job"].split(" ", 1)
        what = f"rule `{rule}` {job} through Snakemake (default config){side}, on {f['device']}"
        cpu = (
            f" (the default run on 2 cores, 1 thread a training: {f['cpu_seconds']} s)" if f.get("cpu_seconds") else ""
        )
        score = f"; test mR {f['mR']}" if f.get("mR") else ""
        rows.append((what, f"**{f['seconds']} s**{cpu}{score}"))
    for job, rc in failed:
        rule, job = job.split(" ", 1)
        what = f"rule `{rule}` {job} through Snakemake (default config){side}"
        why = "stopped by the trainings' time limit" if rc in (124, 143) else f"failed (exit status {rc})"
        rows.append((what, f"did not finish: {why}"))
    return rows


def _describe(step: str, rc: int, limit: str, log: str, run: Path) -> tuple[str, str]:
    result = RESULT.search(log)
    if result:
        f = _fields(result["fields"])
        family = FAMILY[result["family"]]
        steps = int(f["steps"])
        loader = "1 loader process" if f.get("workers") == "1" else "batches drawn between the steps"
        what = (
            f"{family} {'epoch' if steps == FULL_EPOCH[family] else 'steps'} at the scale sizes ({steps:,} steps), "
            f"{_precision(f['amp'])}, {TABLES.get(f['optimiser'], f['optimiser'])} word tables, {loader}"
        )
        baseline = re.search(r"^code (\w+)$", log, re.M) if step.endswith("_baseline") else None
        if baseline:  # another commit's code, run beside this one's on the same machine
            what += f", the code of `{baseline[1]}`"
        seconds, per_step = float(f["epoch_seconds"]), 1000 * float(f["seconds_per_step"])
        return what, f"**{seconds:.1f} s** ({per_step:.1f} ms a step), peak {f['peak_gpu_gib']} GiB on the GPU"
    if step.endswith("sync"):
        m = SYNCS.search(log)
        if m:
            n, steps = int(m["n"]), int(m["steps"])
            return "SMALR step: host-device synchronisations", f"{n / steps:.0f} a step ({n} in {steps} steps)"
    if step.endswith("profile"):
        wall, device = PROFILE_WALL.search(log), PROFILE_DEVICE.search(log)
        if wall and device:
            steps = int(wall["steps"])
            return (
                "SMALR step under torch.profiler",
                f"GPU busy {float(device['ms']) / steps:.1f} ms of {float(wall['wall']):.1f} ms a step "
                "(the profiler slows the host)",
            )
    if step.startswith("tests"):
        m = TESTS.search(log)
        if m:
            failed = int(m["failed"] or 0)
            detail = ""
            if failed:
                names = re.findall(r"^FAILED (\S+)", log, re.M)
                errors = re.findall(r"^E\s+(\w+Error: .*)$", log, re.M)
                detail = f" ({', '.join(n.split('::')[-1] for n in names)}: {errors[0] if errors else 'see log'})"
            return "the families' training tests on CUDA", f"{m['passed']} passed, {failed} failed{detail}"
    if step.startswith("speech"):
        rows = SPEECH.findall(log)
        if rows:
            parts = [f"{POOLING.get(p, p)} {float(s):.3f} s" for size, p, _, s in rows if size == "thesis"]
            batch = next(b for size, _, b, _ in rows if size == "thesis")
            return f"grounded-speech step, the thesis' widths, batch {batch}", ", ".join(parts)
    if rc in (124, 137):
        epoch = re.fullmatch(r"(smalr|embn)_epoch_(fp32|bf16)", step)
        what = (
            f"{FAMILY[epoch[1]]} epoch at the scale sizes, {_precision(epoch[2])}" if epoch else step.replace("_", " ")
        )
        return what, f"did not finish within the step's {limit} s limit"
    raise GpuRunError(f"{run}/{step}.log: no result line (exit status {rc})")


def gpu_runs_block(runs_dir: Path) -> str:
    """The table of every kept run under ``runs_dir`` (oldest first)."""
    runs = [p for p in runs_dir.iterdir() if p.is_dir()] if runs_dir.is_dir() else []
    # in the order they ran: session.txt starts with the run's UTC time
    runs.sort(key=lambda p: (p / "session.txt").read_text(encoding="utf-8").split("\n", 1)[0])
    if not runs:
        return "No GPU run is kept in `docs/gpu_runs/`: the CUDA path is unmeasured.\n"
    lines = ["| run (date, commit) | device | what | result |", "|---|---|---|---|"]
    for run in runs:
        date, _, commit = run.name.partition("_")
        commit = commit.split("_")[0]  # a second run of one commit is kept as <date>_<commit>_2
        device = (run / "device.txt").read_text(encoding="utf-8").splitlines()
        card = device[1].split(",")[0].strip() if len(device) > 1 else "?"
        torch_line = next((l for l in device if l.startswith("torch ")), "")
        torch_version = torch_line.split()[1] if torch_line else "?"
        for what, result in step_results(run):
            lines.append(f"| {date} `{commit}` | {card}, torch {torch_version} | {what} | {result} |")
    return "\n".join(lines) + "\n"


def keep_run(out: Path, runs_dir: Path, date: str, commit: str) -> Path:
    """Copy a session's ``$OUT`` (session.txt, device.txt, the steps' logs) to ``runs_dir/<date>_<commit>``
    (``_2``, ``_3`` … after it for further runs of the same commit)."""
    if not (out / "session.txt").is_file():
        raise GpuRunError(f"{out}: no session.txt (bench/cuda_session.sh writes it)")
    target, n = runs_dir / f"{date}_{commit}", 1
    while (target / "session.txt").is_file():  # another run of the same commit is kept beside it
        n += 1
        target = runs_dir / f"{date}_{commit}_{n}"
    target.mkdir(parents=True, exist_ok=True)
    for f in sorted(out.iterdir()):
        if f.suffix in (".txt", ".log"):
            shutil.copyfile(f, target / f.name)
    step_results(target)  # fails now, not at the next `write`, on a run it cannot read
    return target
