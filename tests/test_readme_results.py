"""The numbers of the README and its result pages are written from a run's results (polyvse.report.readme)."""

from pathlib import Path

import pandas as pd
import pytest

from polyvse.report.readme import (
    ReadmeError,
    benchmarks_summary,
    compare_with_snapshot,
    findings_block,
    learning_block,
    differing_files,
    fill_blocks,
    fill_pages,
    main,
    page_blocks,
    queries_block,
    read_blocks,
    readme_blocks,
    relative_links,
    run_summary,
    speech_summary,
    take_snapshot,
)

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "docs" / "default_run"
MIN_EFFECTIVE_TOKENS = 32.0  # above the collapsed run's best language (22.1), below the cosine scorer's worst


def test_result_blocks_of_the_readme_and_its_pages_are_the_snapshots():
    """Fails when a number of the README or of a result page was edited by hand, or the snapshot changed
    without `write`."""
    expected = readme_blocks(SNAPSHOT)
    shown = page_blocks(REPO, expected)
    assert set().union(*shown.values()) == set(expected)
    for page, blocks in shown.items():
        found = read_blocks((REPO / page).read_text(encoding="utf-8"))
        assert set(found) == set(blocks), f"{page}: a block with no generated content"
        for name, body in blocks.items():
            assert found[name] == body, (
                f"{page}: block {name!r} differs from {SNAPSHOT}: run `python -m polyvse.report.readme write`"
            )


def test_fill_pages_shows_a_block_on_several_pages_with_links_from_each():
    block = "see [`docs/default_run/x.md`](docs/default_run/x.md) and [the web](https://example.org/a)"
    pages = {
        "README.md": "<!-- results:a:start -->\n<!-- results:a:end -->\n",
        "docs/results.md": "top\n<!-- results:a:start -->\nold\n<!-- results:a:end -->\n",
    }
    out = fill_pages(pages, {"a": block})
    assert read_blocks(out["README.md"]) == {"a": block + "\n"}
    assert read_blocks(out["docs/results.md"]) == {
        "a": "see [`docs/default_run/x.md`](default_run/x.md) and [the web](https://example.org/a)\n"
    }
    assert relative_links("[t](docs/a.md#h) [u](#here) [v](README.md)", "docs/results.md") == (
        "[t](a.md#h) [u](#here) [v](../README.md)"
    )
    with pytest.raises(ReadmeError, match="no generated content: a"):
        fill_pages(pages, {})
    with pytest.raises(ReadmeError, match="no marker on any of README.md, docs/results.md: b"):
        fill_pages(pages, {"a": "x", "b": "y"})


def test_snapshot_equals_results_of_a_default_run_when_one_is_here():
    """After `snakemake --cores all` on the default config in this checkout, its tables are the snapshot's: on
    the snapshot's inputs every number within polyvse.report.comparison.TOLERANCE, every word, every finding's
    verdict and every model's learned the same; on another machine's inputs (another CPU's image features) the
    same tables, rows and columns, data statistics and learned models (RunComparison.passes)."""
    results = REPO / "results"
    if not (results / "table2.tsv").is_file():
        pytest.skip("no default run in results/ to compare with")
    found = compare_with_snapshot(results, SNAPSHOT)
    if not found.passes:
        pytest.fail(f"results/ is not the result of {SNAPSHOT}:\n" + "\n".join(found.failures()), pytrace=False)


def test_fill_blocks_replaces_bodies_and_keeps_the_rest():
    readme = (
        "intro\n<!-- results:a:start -->\nold\n<!-- results:a:end -->\nmiddle 12.3\n"
        "<!-- results:b:start -->\n<!-- results:b:end -->\nend\n"
    )
    out = fill_blocks(readme, {"a": "new 1", "b": "| x |\n"})
    assert out == (
        "intro\n<!-- results:a:start -->\nnew 1\n<!-- results:a:end -->\nmiddle 12.3\n"
        "<!-- results:b:start -->\n| x |\n<!-- results:b:end -->\nend\n"
    )
    assert read_blocks(out) == {"a": "new 1\n", "b": "| x |\n"}


def test_fill_blocks_names_missing_and_unused_blocks():
    readme = "<!-- results:a:start -->\n<!-- results:a:end -->\n"
    with pytest.raises(ReadmeError, match="no generated content: a"):
        fill_blocks(readme, {})
    with pytest.raises(ReadmeError, match="no marker in the README: b"):
        fill_blocks(readme, {"a": "x", "b": "y"})


def test_learning_block_is_the_overview_s_summary_and_where_it_is(tmp_path):
    snapshot = tmp_path / "default_run"
    snapshot.mkdir()
    (snapshot / "learning.md").write_text("# Which models learned\n\n120 trained models: 118 learned.\n\nScore: ...\n")
    assert learning_block(snapshot) == (
        "120 trained models: 118 learned. Each model's score beside its chance level, its best epoch and why it "
        "stopped: [`docs/default_run/learning.md`](docs/default_run/learning.md); its validation curves, one figure "
        "a table, in `docs/default_run/learning/`.\n"
    ).replace("docs/", f"{tmp_path.name}/")
    (snapshot / "learning.md").write_text("no title\n")
    with pytest.raises(ReadmeError, match="learning.md: no summary of 1 paragraph"):
        learning_block(snapshot)


def test_queries_block_is_the_described_queries_summary_and_where_it_is(tmp_path):
    from polyvse.evaluate.described import Description
    from polyvse.report.described_queries import described_markdown

    snapshot = tmp_path / "default_run"
    snapshot.mkdir()
    found = [(Description("red", "circle"), 7, 0.8), (Description("blue", "star", 2), 6, 0.6)]
    (snapshot / "described_queries.md").write_text(described_markdown(found, "embn_en", 5, 5, 128))
    where = f"{tmp_path.name}/default_run/described_queries.md"
    assert queries_block(snapshot) == (
        "Mean precision at 5: **0.70** over the 2 colour × shape descriptions that 5 or more of the 128 test images "
        "show (relevance from the scene plans; `polyvse query MODEL --text '...' --lang en` ranks the same way). "
        f"Worst: 'two blue stars' 0.6, 'a red circle' 0.8. Every query: [`{where}`]({where}).\n"
    )
    (snapshot / "described_queries.md").write_text("no title\n")
    with pytest.raises(ReadmeError, match="described_queries.md: no summary of 2 paragraph"):
        queries_block(snapshot)


def test_findings_block_is_the_run_s_report_one_level_down(tmp_path):
    (tmp_path / "findings.md").write_text("# The seeds' findings on our tables\n\n2 claims.\n\n## A claim\n\n| row |\n")
    assert findings_block(tmp_path) == "2 claims.\n\n### A claim\n\n| row |\n"


def test_speech_summary_means_image_and_cross_lingual_pairs(tmp_path):
    row = {
        "model": "Hyper",
        "E&I.R1": 1.0,
        "H&I.R1": 2.0,
        "J&I.R1": 3.0,
        "E&I.R10": 10.0,
        "H&I.R10": 20.0,
        "J&I.R10": 30.0,
        "H&E.R1": 4.0,
        "J&E.R1": 5.0,
        "J&H.R1": 6.0,
        "H&E.R10": 7.0,
        "J&E.R10": 8.0,
        "J&H.R10": 9.0,
        "Ep": 3,
        "params": 100,
    }
    pd.DataFrame([row]).to_csv(tmp_path / "s.tsv", sep="\t", index=False)
    lines = speech_summary(tmp_path, {"s": "3.2 objectives"}).splitlines()
    assert lines[-1] == "| 3.2 objectives | Hyper | 2.0 | 20.0 | 5.0 | 8.0 | 3 |"


def test_snapshot_and_check_find_a_changed_table(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    results.mkdir()
    (results / "table2.tsv").write_text("model\tHA\nX\t1.0\n")
    (results / "table2.md").write_text("| X |\n")
    runs = tmp_path / "runs.tsv"
    runs.write_text("started\tfinished\twall_s\tcommit\thost\na\tb\t10\tc\td\na\tb\t1500\tabc\tx86_64, 2 CPUs\n")
    take_snapshot(results, runs, snap)
    assert sorted(p.name for p in snap.iterdir()) == ["run.tsv", "table2.md", "table2.tsv"]
    assert pd.read_csv(snap / "run.tsv", sep="\t")["wall_s"].tolist() == [10, 1500]  # one run, two invocations
    assert main(["check", "--results", str(results), "--snapshot", str(snap)]) == 0
    (results / "table2.tsv").write_text("model\tHA\nX\t1.1\n")  # not equal, but within the tolerance
    assert differing_files(results, snap) == ["table2.tsv"]
    assert main(["check", "--results", str(results), "--snapshot", str(snap)]) == 0
    (results / "table2.tsv").write_text("model\tHA\nX\t9.0\n")
    (results / "figure3.tsv").write_text("x\n")
    assert differing_files(results, snap) == ["figure3.tsv", "table2.tsv"]
    assert main(["check", "--results", str(results), "--snapshot", str(snap)]) == 1


def test_snapshot_of_an_empty_results_directory_fails_naming_it(tmp_path, capsys):
    (tmp_path / "results").mkdir()
    code = main(
        [
            "snapshot",
            "--results",
            str(tmp_path / "results"),
            "--runs",
            str(tmp_path / "runs.tsv"),
            "--snapshot",
            str(tmp_path / "snap"),
        ]
    )
    assert code == 2
    assert "results: no tables" in capsys.readouterr().err


def test_timings_are_not_compared_and_are_summarised_per_rule(tmp_path):
    results, snapshot = tmp_path / "results", tmp_path / "snap"
    for d, seconds in ((results, 10.0), (snapshot, 12.5)):
        d.mkdir()
        (d / "table2.tsv").write_text("model\tA\nSMALR\t1.0\n")
        pd.DataFrame(
            [
                {
                    "rule": "train",
                    "jobs": 2,
                    "seconds": seconds,
                    "share": 100.0,
                    "median_seconds": 5.0,
                    "max_seconds": 6.0,
                    "max_rss_mb": 300.0,
                    "cpu_seconds": 9.0,
                    "startup_seconds": 3.0,
                }
            ]
        ).to_csv(d / "benchmarks_by_rule.tsv", sep="\t", index=False)
    assert differing_files(results, snapshot) == []  # another machine's minute is not another result
    text = benchmarks_summary(snapshot)
    assert text.startswith("2 jobs, 0.2 minutes of job wall time (")
    assert "and 0.1 of CPU time (each job's own measure" in text
    assert "| `train` | 2 | 12 | 100.0 | 5.0 | 6.0 | 300 | 9 | 3 |" in text
    assert "0.1 minutes of the wall time, 24.0 %, the jobs' start-up" in text
    assert "by what the jobs do" not in text  # a snapshot from before the family sums
    for d, cpu in ((results, 540.0), (snapshot, 600.0)):
        pd.DataFrame(
            [
                {"family": "mule", "jobs": 3, "cpu_seconds": cpu, "seconds": 700.0, "cpu_share": 80.0},
                {"family": "latent pretraining", "jobs": 1, "cpu_seconds": 150.0, "seconds": 160.0, "cpu_share": 20.0},
            ]
        ).to_csv(d / "benchmarks_by_family.tsv", sep="\t", index=False)
    assert differing_files(results, snapshot) == []
    text = benchmarks_summary(snapshot)
    assert "Its 12.5 CPU minutes of the jobs with a benchmark file, by what the jobs do" in text
    assert "| MULE | 3 | 10.0 | 80.0 |" in text and "| latent pretraining | 1 | 2.5 | 20.0 |" in text


def test_numbers_equal_to_the_last_digits_are_the_same_table(tmp_path):
    """A least-squares slope may differ in its 16th digit between two CPUs: not another result; the 4th is."""
    from polyvse.report.readme import same_file

    a, b, c, d = (tmp_path / f"{n}.tsv" for n in "abcd")
    a.write_text("lang\tslope\nen\t-1.016636719141889\n")
    b.write_text("lang\tslope\nen\t-1.016636719141891\n")
    c.write_text("lang\tslope\nen\t-1.0167\n")
    d.write_text("lang\tslope\nde\t-1.016636719141889\n")
    assert same_file(a, b) and not same_file(a, c) and not same_file(a, d)
    (tmp_path / "a.md").write_text("| -1.016636719141889 |")
    (tmp_path / "b.md").write_text("| -1.016636719141891 |")
    assert not same_file(tmp_path / "a.md", tmp_path / "b.md")  # Markdown compares as text


def test_the_snapshot_keeps_the_runs_provenance_and_never_compares_it(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    (results / "provenance").mkdir(parents=True)
    (results / "table2.tsv").write_text("model\tHA\nX\t1.0\n")
    (results / "provenance" / "run.tsv").write_text("stage\titem\tvalue\nenvironment\tcpu\tA\n")
    runs = tmp_path / "runs.tsv"
    runs.write_text("started\tfinished\twall_s\tcommit\thost\na\tb\t10\tc\td\n")
    take_snapshot(results, runs, snap)
    assert (snap / "provenance.tsv").read_text() == (results / "provenance" / "run.tsv").read_text()
    (results / "provenance" / "run.tsv").write_text("stage\titem\tvalue\nenvironment\tcpu\tB\n")  # another machine
    assert differing_files(results, snap) == []


def test_the_snapshot_keeps_the_learning_overview_and_its_curves(tmp_path):
    """results/learning.{md,tsv} are top-level tables; their validation curves go to learning/ beside them,
    kept for docs/ to show and never compared."""
    results, snap = tmp_path / "results", tmp_path / "snap"
    (results / "learning").mkdir(parents=True)
    (results / "learning.tsv").write_text("variant\tscore\nembn_en\t3.1\n")
    (results / "learning.md").write_text("# Which models learned\n")
    (results / "learning" / "table2.png").write_bytes(b"\x89PNG one")
    runs = tmp_path / "runs.tsv"
    runs.write_text("started\tfinished\twall_s\tcommit\thost\na\tb\t10\tc\td\n")
    copied = take_snapshot(results, runs, snap)
    assert sorted(p.name for p in copied) == ["learning.md", "learning.tsv", "table2.png"]
    assert (snap / "learning" / "table2.png").read_bytes() == b"\x89PNG one"
    assert (snap / "learning.md").read_text() == "# Which models learned\n"
    (results / "learning" / "table2.png").write_bytes(b"\x89PNG two")  # another run draws other pixels
    assert differing_files(results, snap) == []


def test_the_snapshot_keeps_each_pretraining_s_usage_and_check_compares_it(tmp_path):
    results, snap = tmp_path / "results", tmp_path / "snap"
    (results / "m30k" / "pretrain").mkdir(parents=True)
    (results / "table2.tsv").write_text("model\tHA\nX\t1.0\n")
    usage = results / "m30k" / "pretrain" / "latent_usage.tsv"
    usage.write_text("scope\twords\teffective_tokens\nall\t100\t40.0\naf\t50\t20.0\n")
    runs = tmp_path / "runs.tsv"
    runs.write_text("started\tfinished\twall_s\tcommit\thost\na\tb\t10\tc\td\n")
    take_snapshot(results, runs, snap)
    assert (snap / "m30k.latent_usage.tsv").read_text() == usage.read_text()
    assert differing_files(results, snap) == []
    usage.write_text("scope\twords\teffective_tokens\nall\t100\t40.0\naf\t50\t3.0\n")  # af collapsed
    assert differing_files(results, snap) == ["m30k.latent_usage.tsv"]


def test_every_language_of_the_default_pretraining_spreads_over_many_tokens():
    """The default run's latent pretraining gives every language's words at least
    :data:`MIN_EFFECTIVE_TOKENS` equally used tokens (2 to the entropy of its words' assignment). The dot
    scorer put Afrikaans' 4,842 words on 12.3 effective tokens, Korean's on 22.1, and LA, which reads
    tokens only, stayed under 5x chance in those languages (docs/learning.md); the tables do not show it."""
    usage = pd.read_csv(SNAPSHOT / "m30k.latent_usage.tsv", sep="\t").set_index("scope")
    langs = usage.drop(index="all")
    assert len(langs) == 10, list(langs.index)
    starved = langs[langs["effective_tokens"] < MIN_EFFECTIVE_TOKENS]
    assert starved.empty, starved[["words", "tokens_used", "effective_tokens"]]


def test_every_model_of_the_default_run_learned_or_is_a_listed_exception():
    """Every trained model of the snapshot's run reached its threshold (a word model 5x chance in its mean
    and in every language it reports, the others 3x), or is a row a paper or an ablation shows degraded
    (learning.EXCEPTIONS, each listed with its reason)."""
    table = pd.read_csv(SNAPSHOT / "learning.tsv", sep="\t", keep_default_na=False)
    assert len(table) > 100, len(table)
    failed = table[(table["learned"] != "yes") & (table["exception"] == "")]
    assert failed.empty, failed[["variant", "run", "score", "chance", "worst_lang", "worst_score"]]
    expected = table[table["exception"] != ""]
    assert (expected["learned"] != "yes").all(), "an exception that learned is no exception any more"


def test_no_finding_of_the_default_run_compares_a_row_that_hit_its_ceiling():
    """Every claim's rows stopped on patience in at least two of their three seeds (findings.CEILING_SEEDS)."""
    from polyvse.report.findings import hit_ceiling

    findings = pd.read_csv(SNAPSHOT / "findings.tsv", sep="\t", keep_default_na=False)
    capped = findings[[hit_ceiling(str(e).split()) for e in findings["best_epochs"]]]
    assert capped.empty, capped[["claim", "row", "best_epochs"]]


def _scale_workdir(root: Path) -> Path:
    """A scale run's directory as Snakemake leaves it: two invocations, two jobs' benchmarks and logs,
    a pretraining's usage report and the dataset's statistics."""
    (root / "logs" / "m30k").mkdir(parents=True)
    (root / "logs" / "runs.tsv").write_text(
        "started\tfinished\twall_s\tcommit\thost\n"
        "2026-11-26 06:25:20\t2026-11-26 07:40:00\t4480\tabc\tx86_64, 2 CPUs\n"
        "2026-11-26 07:41:00\t2026-11-26 08:10:00\t1740\tabc\tx86_64, 2 CPUs\n"
    )
    (root / "logs" / "m30k" / "pretrain_latent.log").write_text("07:41:02 INFO polyvse.pretrain: start-up 2.00 s\n")
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    for rule, job, seconds, rss in (("pretrain", "latent", 1700.0, 1800.0), ("corpus", "en", 150.0, 200.0)):
        path = root / "benchmarks" / rule / "m30k" / f"{job}.tsv"
        path.parent.mkdir(parents=True)
        path.write_text(header + f"{seconds}\t0:00:00\t{rss}\t1\t1\t1\t0\t0\t50\t{seconds}\n")
    (root / "results" / "m30k" / "pretrain").mkdir(parents=True)
    (root / "results" / "m30k" / "pretrain" / "latent_usage.tsv").write_text(
        "scope\twords\ttokens_used\tlargest_token_words\tlargest_token_share\tentropy_bits\tnormalised_entropy\t"
        "effective_tokens\nall\t125000\t30000\t1250\t0.01\t14.0\t0.92\t16384.0\n"
    )
    (root / "results" / "m30k" / "pretrain" / "latent.checkpoint").mkdir()
    (root / "results" / "m30k" / "pretrain" / "latent.checkpoint" / "epochs.tsv").write_text(
        "epoch\tloss\ttriplet\tusage_entropy\tval_score\tval_loss\ttokens_used\tseconds\n"
        "1\t0.16\t0.15\t0.99\t6.1667\t0.09\t31234\t1512.0\n"
    )
    (root / "results" / "m30k" / "data_stats.tsv").write_text(
        "dataset\tlang\tunit\tcaptions\ttrain_tokens\ttypes\thapax_share\tat_most_2_share\ttest_oov_rate\t"
        "rank_freq_slope\ttop5000_token_share\nm30k\ten\tword\t145000\t2000000\t22899\t0.5\t0.6\t0.004\t-1.3\t0.97\n"
    )
    return root


def test_scale_snapshot_gathers_the_runs_measurements_and_writes_its_blocks(tmp_path):
    from polyvse.report.readme import SCALE_BLOCKS

    snapshot = tmp_path / "docs" / "scale_run"
    work = _scale_workdir(tmp_path / "work")
    code = main(["scale-snapshot", "--workdir", str(work), "--snapshot", str(snapshot)])
    assert code == 0
    assert sorted(p.name for p in snapshot.iterdir()) == [
        "benchmarks.tsv",
        "benchmarks_by_rule.tsv",
        "m30k.data_stats.tsv",
        "m30k.latent_epochs.tsv",
        "m30k.latent_usage.tsv",
        "run.tsv",
    ]
    assert not list(snapshot.parent.glob(".*"))  # written beside, then renamed: nothing partial left
    blocks = {name: make(snapshot) for name, make in SCALE_BLOCKS.items()}
    assert blocks["scale_run"].startswith("The scale run: 2 invocations of `snakemake` from commit `abc`")
    assert "1:43:40 (h:mm:ss) of wall time in all" in blocks["scale_run"]
    assert "| `pretrain` | 1 | 1700 | 91.9 | 1700.0 | 1700.0 | 1800 | 1700 | 2 |" in blocks["scale_benchmarks"]
    assert blocks["scale_usage"].startswith(
        "`m30k.latent`, epoch 1: 25.2 minutes, validation cross-lingual retrieval 6.17, 31,234 tokens used.\n\n"
    )
    assert "| m30k.latent | all | 125,000 | 30,000 | 1,250 | 1.00 | 0.920 | 16,384 |" in blocks["scale_usage"]
    assert "| m30k | en | 145,000 | 2,000,000 | 22,899 | 50.0 | 60.0 | 0.40 | -1.30 |" in blocks["scale_data_stats"]


def test_scale_snapshot_without_a_finished_run_fails_naming_the_file(tmp_path, capsys):
    work = _scale_workdir(tmp_path / "work")
    (work / "logs" / "runs.tsv").unlink()
    assert main(["scale-snapshot", "--workdir", str(work), "--snapshot", str(tmp_path / "snap")]) == 2
    assert "runs.tsv: no finished run recorded" in capsys.readouterr().err
    assert not (tmp_path / "snap").exists()


def test_the_run_line_times_every_invocation_of_a_resumed_run(tmp_path):
    header = "started\tfinished\twall_s\tcommit\thost\n"
    (tmp_path / "run.tsv").write_text(header + "2026-11-29 01:00:00\t2026-11-29 01:25:00\t1500\tabc\tx86_64, 2 CPUs\n")
    assert run_summary(tmp_path) == (
        "Run finished 2026-11-29 01:25:00 (UTC) from commit `abc`; its last invocation of `snakemake` took 0:25:00 "
        "(h:mm:ss) on x86_64, 2 CPUs."
    )
    (tmp_path / "run.tsv").write_text(
        header
        + "2026-11-28 22:00:00\t2026-11-28 23:00:00\t3600\tabc\tx86_64, 2 CPUs\n"
        + "2026-11-29 01:00:00\t2026-11-29 01:25:00\t1500\tdef\tx86_64, 2 CPUs\n"
    )
    assert run_summary(tmp_path) == (
        "Run finished 2026-11-29 01:25:00 (UTC) from commits `abc`, `def` on x86_64, 2 CPUs: 2 invocations of "
        "`snakemake` (a stopped run resumes), the first started 2026-11-28 22:00:00, 1:25:00 (h:mm:ss) of their "
        "wall time in all."
    )
    (tmp_path / "run.tsv").write_text(
        header
        + "2026-11-28 22:00:00\t2026-11-28 23:00:00\t3600\tabc\tx86_64, 2 CPUs\n"
        + "2026-11-28 23:10:00\t\t\tdef\tx86_64, 2 CPUs\n"  # stopped: no end recorded
        + "2026-11-29 01:00:00\t2026-11-29 01:25:00\t1500\tdef\tx86_64, 2 CPUs\n"
    )
    assert run_summary(tmp_path) == (
        "Run finished 2026-11-29 01:25:00 (UTC) from commits `abc`, `def` on x86_64, 2 CPUs: 3 invocations of "
        "`snakemake` (a stopped run resumes), the first started 2026-11-28 22:00:00, 1:25:00 (h:mm:ss) of wall "
        "time in the 2 that finished; 1 was stopped before its end and left no wall time."
    )
    (tmp_path / "run.tsv").write_text(header + "2026-11-28 23:10:00\t\t\tdef\tx86_64, 2 CPUs\n")
    with pytest.raises(ReadmeError, match="no finished run recorded"):
        run_summary(tmp_path)
