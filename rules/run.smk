# The run's housekeeping, beside the DAG: Snakemake's lock left by a killed run, stopping the jobs
# on a signal, and the record of each invocation in logs/runs.tsv.
import sys
import time
from pathlib import Path

from polyvse.logs import record_invocation
from polyvse.runlock import claim_directory, release_directory
from polyvse.stopping import cancel_scheduler_timers, stop_jobs_on_signals

_STARTED = time.time()

# A run killed with SIGKILL leaves snakemake's lock behind; this run clears it when
# no run that could hold it is alive, and says in one line which live run holds it
# otherwise (polyvse.runlock). Job processes on cluster nodes take no lock and claim
# nothing.
_SNAKEMAKE_DIR = Path(".snakemake")
if workflow.is_main_process:
    _lock_news = claim_directory(_SNAKEMAKE_DIR)
    if _lock_news:
        print(_lock_news, file=sys.stderr)


def _elapsed():
    return time.strftime("%H:%M:%S", time.gmtime(time.time() - _STARTED))


onstart:
    # after snakemake's own SIGTERM handler (which waits for running jobs): stop them
    stop_jobs_on_signals()
    # a row now, its end filled in on success: a killed invocation is still counted
    record_invocation("logs/runs.tsv", _STARTED, workflow.basedir, finished=False)


onsuccess:
    release_directory(_SNAKEMAKE_DIR)
    # the run time of the README and docs/results.md comes from it
    record_invocation("logs/runs.tsv", _STARTED, workflow.basedir)
    cancel_scheduler_timers()
    print(f"polyvse: workflow finished in {_elapsed()} (h:m:s); tables are in {R}/")


onerror:
    release_directory(_SNAKEMAKE_DIR)
    cancel_scheduler_timers()
    print(f"polyvse: workflow failed after {_elapsed()} (h:m:s); see the log named above and logs/")
