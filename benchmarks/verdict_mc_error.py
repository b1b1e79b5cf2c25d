"""Is the reported Monte Carlo SE of a cell's p-values the spread a different seed gives?

For a handful of cells (HANNA and SummEval through ../shared/datasets, and simulated 3x40, 7x20
and 12x150 cells of the calibration's designs with a reader-like judge) the cell is bootstrapped at
``--seeds`` cell streams with ``--n-boot`` replicates (:func:`judge_transfer_audit.verdict.compare.compare_cell`,
the default policy) and, per cell, the table prints the mean equivalence p (``p_equivalence``, the
PASS test) and the FAIL test's p (``p_outside``), the standard deviation of each over the streams
(observed) and the median of its reported Monte Carlo SE, and their ratio (target: within ~30%).
The real-data cells are those whose equivalence p at stream 0 lies in ``[0.005, 0.3]`` (where the
Monte Carlo error can matter), at most ``--per-dataset`` of them, the HANNA cell
(BertGeneration vs GPT-2 / coherence) first.

    JUDGE_AUDIT_DATASETS=/path/to/shared/datasets python benchmarks/verdict_mc_error.py --seeds 40
    python benchmarks/verdict_mc_error.py --seeds 40 --no-real     # the simulated cells only
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from judge_transfer_audit.inputs.load import load_audit_data  # noqa: E402
from judge_transfer_audit.model.policy import TransferPolicy  # noqa: E402
from judge_transfer_audit.model.tie_rules import EVEN_SPLIT  # noqa: E402
from judge_transfer_audit.verdict.assess import CellInput, cell_input, compare_input  # noqa: E402
from judge_transfer_audit.verdict.calibration import CELLS  # noqa: E402
from judge_transfer_audit.verdict.compare import cell_generator  # noqa: E402
from judge_transfer_audit.verdict.judge_side import judge_pair_outcomes  # noqa: E402
from judge_transfer_audit.verdict.simulate import simulate_cell, simulate_judge  # noqa: E402

SHARED = Path(os.environ.get("JUDGE_AUDIT_DATASETS") or ROOT.parent / "shared" / "datasets")
ISSUE_CELL = ("BertGeneration vs GPT-2", "coherence")


def bootstrap_cell(c: CellInput, stream: int, n_boot: int, policy: TransferPolicy):
    return compare_input(c, tie_rule=EVEN_SPLIT, policy=policy, rng=cell_generator(stream, *c.key), n_boot=n_boot)


def real_cells(name: str, judge_csv: Path, humans_csv: Path, judge: str | None, per_dataset: int, policy):
    data = load_audit_data(judge_csv, humans_csv)
    outcomes = judge_pair_outcomes(data, EVEN_SPLIT, np.random.default_rng(0))
    judge = judge or sorted(outcomes["judge"].unique())[0]
    outcomes = outcomes[outcomes["judge"] == judge]
    by_votes = dict(tuple(data.votes.groupby(["matchup", "criterion"], sort=False)))
    by_judge = dict(tuple(outcomes.groupby(["matchup", "criterion"], sort=False)))
    keys = sorted(by_votes, key=lambda k: k != ISSUE_CELL)
    found = []
    for key in keys:
        if key not in by_judge:
            continue
        c = cell_input(key[0], key[1], by_votes[key], by_judge[key])
        comparison = bootstrap_cell(c, 0, policy.n_boot, policy)
        if not comparison.assessed:
            continue
        p_eq, _ = comparison.p_equivalence_with_se()
        if 0.005 <= p_eq <= 0.3:
            found.append((f"{name} {key[0]} / {key[1]}", c))
        if len(found) >= per_dataset:
            break
    return found


def simulated_cells():
    out = []
    for readers, pairs in ((3, 40), (7, 20), (12, 150)):
        for index in (1, 2, 5):
            key = (f"{readers}x{pairs}", "mc-error", str(index))
            rng = cell_generator(0, *key)
            cell = simulate_cell(CELLS[index], pairs, readers, rng)
            judge = simulate_judge("reader-like", cell, rng)
            out.append(
                (
                    f"simulated {readers}x{pairs} cell {index} reader-like",
                    CellInput(key, 1.0, cell.pair_id, cell.reader_id, cell.y, cell.pairs, judge.credit),
                )
            )
    return out


def measure(c: CellInput, seeds: int, n_boot: int, policy: TransferPolicy) -> dict[str, tuple[float, float, float]]:
    """Per test: (mean p, observed SD over the streams, median reported SE)."""
    rows = {"p_equivalence": [], "p_outside": []}
    for stream in range(1, seeds + 1):
        comparison = bootstrap_cell(c, stream, n_boot, policy)
        rows["p_equivalence"].append(comparison.p_equivalence_with_se())
        rows["p_outside"].append(comparison.p_outside_with_se())
    out = {}
    for test, values in rows.items():
        a = np.array(values, float)
        out[test] = (float(a[:, 0].mean()), float(a[:, 0].std(ddof=1)), float(np.median(a[:, 1])))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--n-boot", type=int, default=None, help="replicates (default: the policy's)")
    ap.add_argument("--per-dataset", type=int, default=3)
    ap.add_argument("--no-real", action="store_true", help="the simulated cells only")
    args = ap.parse_args(argv)
    policy = TransferPolicy()
    n_boot = args.n_boot or policy.n_boot
    started, cpu = time.perf_counter(), time.process_time()
    cells = []
    if not args.no_real:
        if not (SHARED / "convert.py").exists():
            print(f"{SHARED} is absent (set JUDGE_AUDIT_DATASETS or pass --no-real)", file=sys.stderr)
            return 2
        from tests.support.hanna import convert_hanna  # noqa: PLC0415

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)
            subprocess.run([sys.executable, str(SHARED / "convert.py"), str(out)], check=True, capture_output=True)
            hanna = convert_hanna(SHARED / "hanna" / "hanna_metric_scores_llm.csv", out / "hanna")
            cells += real_cells("HANNA", hanna / "judge.csv", hanna / "humans.csv", "ChatGPT", args.per_dataset, policy)
            s = out / "summeval"
            cells += real_cells("SummEval", s / "judge.csv", s / "humans.csv", None, args.per_dataset, policy)
    cells += simulated_cells()
    print(
        f"{args.seeds} cell streams per cell, {n_boot} replicates; SD: observed over the streams, SE: median reported"
    )
    print(
        f"{'cell':62s} {'p_eq':>7s} {'SD':>8s} {'SE':>8s} {'SE/SD':>6s}   "
        f"{'p_out':>9s} {'SD':>9s} {'SE':>9s} {'SE/SD':>6s}"
    )
    ratios = []
    for label, c in cells:
        m = measure(c, args.seeds, n_boot, policy)
        (pe, sde, see), (po, sdo, seo) = m["p_equivalence"], m["p_outside"]
        re = see / sde if sde > 0 else float("nan")
        ro = seo / sdo if sdo > 0 else float("nan")
        ratios.append(re)
        print(f"{label[:62]:62s} {pe:7.4f} {sde:8.5f} {see:8.5f} {re:6.2f}   {po:9.2e} {sdo:9.2e} {seo:9.2e} {ro:6.2f}")
    r = np.array(ratios, float)
    r = r[np.isfinite(r)]
    print(
        f"p_equivalence SE/SD over {r.size} cells: median {np.median(r):.2f}, range {r.min():.2f}-{r.max():.2f}; "
        f"{time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu:.0f} s CPU"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
