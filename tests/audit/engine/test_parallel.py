"""The task runners: order, seeding, byte-identical results across runners, faults."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from judge_transfer_audit.core.errors import InputError, WorkerLostError
from judge_transfer_audit.core.serialize import to_jsonable
from judge_transfer_audit.engine.parallel import (
    LocalPool,
    TaskRunner,
    check_jobs,
    open_runner,
    stable_digest,
    task_seed,
)
from judge_transfer_audit.statistics.uncertainty import cluster_bootstrap, leave_one_reader_out
from tests.audit.statistics.uncertainty.conftest import make_votes


def _square(x):
    return x * x


def _seeded_draw(key):
    return np.random.default_rng(task_seed(7, *key)).random(3).tolist()


def _die(_):
    os._exit(3)  # a worker killed mid-task (out of memory, signal): no exception, no result


class _Bar:
    def __init__(self, log, description, total):
        self.log, self.description, self.total = log, description, total

    def advance(self, n=1):
        self.log.append((self.description, self.total))

    def close(self):
        pass


def test_results_come_back_in_item_order_and_advance_the_bar():
    log = []
    with LocalPool(2, progress=lambda d, t: _Bar(log, d, t)) as pool:
        assert pool.map(_square, list(range(9)), label="squares") == [i * i for i in range(9)]
    assert log == [("squares", 9)] * 9


def test_task_seeds_depend_on_the_key_not_on_the_worker():
    keys = [("pair", ("a", "b"), c) for c in range(4)]
    local = TaskRunner().map(_seeded_draw, keys)
    with LocalPool(2) as pool:
        assert pool.map(_seeded_draw, keys) == local
    assert len({tuple(v) for v in local}) == 4
    assert stable_digest("x", ("a", "b")) == stable_digest("x", ["a", "b"]) != stable_digest("x", ("ab",))


def test_stable_digest_values_are_fixed():
    """The digests seed every task: a change would change every random stream of a run."""
    assert stable_digest("bootstrap", "pair", ("p1", "p2", "é"), 3) == 1778759796259140341
    assert stable_digest("x", [], ("",)) == 5135726711045446998


def test_task_seeds_of_a_shared_key_equal_task_seed_of_each_whole_key():
    from judge_transfer_audit.core.tasks import TaskSeeds

    ids = tuple(f"p{i}" for i in range(50)) + ("é", "")
    seeds = TaskSeeds(11, "bootstrap", "pair", ids)
    for rest in [(0,), (3,), (7, ("x", 1)), ()]:
        whole = task_seed(11, "bootstrap", "pair", ids, *rest)
        assert seeds(*rest).generate_state(4).tolist() == whole.generate_state(4).tolist()


def test_bootstrap_and_loro_are_byte_identical_in_process_and_on_a_pool():
    votes = make_votes(6, n_matchups=2, n_criteria=3, n_pairs=10, n_readers=6, tie_prob=0.05)
    one = [
        json.dumps(to_jsonable(cluster_bootstrap(votes, n_boot=600, rng=4))),
        json.dumps(to_jsonable(leave_one_reader_out(votes))),
    ]
    with LocalPool(2) as pool:
        two = [
            json.dumps(to_jsonable(cluster_bootstrap(votes, n_boot=600, rng=4, runner=pool))),
            json.dumps(to_jsonable(leave_one_reader_out(votes, runner=pool))),
        ]
    assert one == two


def test_a_worker_that_dies_raises_worker_lost_not_a_hang():
    with LocalPool(2) as pool, pytest.raises(WorkerLostError, match="died"):
        pool.map(_die, [1, 2, 3])


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_jobs_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError):
        check_jobs(bad)
    assert check_jobs(None) >= 1


def test_a_scheduler_address_without_protocol_is_an_input_error():
    pytest.importorskip("distributed")
    with pytest.raises(InputError, match="tcp://HOST:PORT"):
        open_runner(scheduler="localhost")


def _call_with(callback, x, pid=None):
    """A call whose argument does not pickle (a lambda): it reaches the worker by fork."""
    return callback(x), os.getpid() if pid is None else pid


def test_run_calls_returns_in_call_order_on_forked_workers_and_in_process():
    from judge_transfer_audit.engine.parallel import run_calls

    calls = [(_call_with, dict(callback=lambda v, k=k: v * 10 + k, x=k)) for k in range(4)]
    here = run_calls(calls, 1)
    there = run_calls(calls, 2)
    assert [r for r, _ in here] == [r for r, _ in there] == [0, 11, 22, 33]
    assert {pid for _, pid in here} == {os.getpid()}
    assert os.getpid() not in {pid for _, pid in there}  # the workers ran them


def test_run_calls_raises_worker_lost_when_a_worker_dies():
    from judge_transfer_audit.engine.parallel import run_calls

    with pytest.raises(WorkerLostError):
        run_calls([(_die, dict(_=1)), (_square, dict(x=2))], 2)
