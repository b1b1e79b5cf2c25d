"""Exit statuses of the ``audit`` command (documented in the README; CI jobs rely on them)."""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0  #: the command ran; with --gate, no check FAILed
    GATE_FAILED = 1  #: --gate (or `audit gate`) and at least one check is FAIL (or ERROR)
    INPUT_ERROR = 2  #: the input files break the data contract; one message per problem
    USAGE_ERROR = 3  #: unknown option, missing argument, bad option value
    MISSING_DEPENDENCY = 4  #: an optional dependency is needed and not installed
    PROVIDER_ERROR = 5  #: an LLM provider failed (generate/score)
    COMPUTATION_ERROR = 6  #: a statistic could not be computed at all
    WORKER_LOST = 7  #: a worker process or the Dask cluster running the tasks went away mid-run
    INTERNAL_ERROR = 70  #: a bug in judge-audit (set JUDGE_AUDIT_DEBUG=1 for the traceback)
    INTERRUPTED = 130  #: Ctrl-C
    #: the command succeeded but its standard output or error was closed early (``| head``), so some of
    #: what it printed was lost: 128 + SIGPIPE, the status a shell reports for a process a closed pipe
    #: stopped. Any other status of the command (2 bad input, 3 usage, 1 gate failed...) is kept as it is.
    OUTPUT_CLOSED = 141
