"""The audit's tasks on a real Dask cluster: a LocalCluster of 2 worker processes started here.

Run with ``python -m pytest -m distributed`` (needs ``pip install 'judge-transfer-audit[dask]'``).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from judge_transfer_audit.cli import main
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.core.errors import WorkerLostError
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.engine.parallel import DaskCluster
from judge_transfer_audit.statistics.uncertainty import cluster_bootstrap, leave_one_reader_out
from tests.audit.statistics.uncertainty.conftest import make_votes
from tests.support.fixture_run import DEPLOY, fixture_run_args, run_result

pytestmark = pytest.mark.distributed
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    import dask

    # a worker that dies fails its task at once (the default retries it on three workers)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    yield cluster
    cluster.close()


def _json(result) -> str:
    return json.dumps(to_jsonable(result))


def test_bootstrap_and_loro_on_the_cluster_equal_in_process(cluster):
    votes = make_votes(6, n_matchups=2, n_criteria=3, n_pairs=10, n_readers=6, tie_prob=0.05)
    local = [_json(cluster_bootstrap(votes, n_boot=600, rng=4)), _json(leave_one_reader_out(votes))]
    with DaskCluster(cluster.scheduler_address) as runner:
        assert runner.jobs == 2
        remote = [
            _json(cluster_bootstrap(votes, n_boot=600, rng=4, runner=runner)),
            _json(leave_one_reader_out(votes, runner=runner)),
        ]
    assert remote == local


def _fixture_run(out: Path, *extra: str) -> dict:
    assert main(fixture_run_args(out, *extra)) == ExitStatus.OK
    return run_result(out)


def test_audit_run_on_the_cluster_equals_jobs_1(cluster, tmp_path):
    one = _fixture_run(tmp_path / "one", "--jobs", "1")
    dask_run = _fixture_run(tmp_path / "dask", "--scheduler", cluster.scheduler_address)
    assert json.dumps(dask_run, sort_keys=True) == json.dumps(one, sort_keys=True)


def test_a_worker_that_dies_is_a_lost_worker_not_a_hang(cluster):
    with DaskCluster(cluster.scheduler_address) as runner, pytest.raises(WorkerLostError, match="lost a worker"):
        runner.map(lambda _: os._exit(3), [1], label="doomed")


def test_an_unreachable_scheduler_is_exit_2_with_the_address(tmp_path, capsys):
    started = time.perf_counter()
    status = main(
        [
            "run",
            str(DEPLOY / "judge.csv"),
            str(DEPLOY / "humans.csv"),
            "--out",
            str(tmp_path),
            "--scheduler",
            "tcp://127.0.0.1:9",
            "-q",
        ]
    )
    assert status == ExitStatus.INPUT_ERROR
    assert "tcp://127.0.0.1:9" in capsys.readouterr().err
    assert time.perf_counter() - started < 40  # the connect timeout, not a hang
