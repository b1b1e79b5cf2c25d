"""The whole `audit run` at scale, per section, beside the GLMMs a user would otherwise fit.

    python benchmarks/audit_scale.py                               # fixture and 100k, jobs 1 and 2
    python benchmarks/audit_scale.py --studies fixture 100k 1m criteria --dask
    python benchmarks/audit_scale.py --studies 1m --jobs 2 --glmer-cache /tmp/glmer   # reuse a 20-min glmer fit

For each study it runs the real command line (`python -m judge_transfer_audit run ... --out TMP`, report included)
in a fresh process per setting and prints one table: wall time, CPU time (user + system, with the
workers it waited for; the machine's load inflates it far less than wall time), peak RSS of the largest process
(``ru_maxrss``), the peak of the whole process tree's proportional set size ("tree MB": the audit and its forked
workers together, shared pages counted once, sampled every 0.2 s; needs psutil, else nan), and the
seconds of each stage (from the run's timings.json, which records each stage's own clock readings;
without it, from the command's stage messages on stderr, to a tenth of a second; with ``--jobs N``
the statistics are one task graph, one stage: "graph"; timings.json in the output lists its tasks).
Settings: ``--jobs`` values and, with ``--dask``, a Dask LocalCluster of 2 single-thread workers started
here. Beside it, one fit of the same cell's votes by lme4 ``glmer`` (Rscript, timed inside R), statsmodels ``mixedlm``
(linear mixed model, pair and reader variance components) and ``gpboost`` (Bernoulli GLMM with
crossed grouped effects), each when installed. Studies (``benchmarks/scale_data.py``, seeded, written
to a temporary folder): ``fixture`` (2.5k votes, 18 cells), ``100k`` (5k pairs, 200 readers, one
cell), ``1m`` (50k pairs, 2k readers, one cell), ``criteria`` (10k criteria x 18 votes).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale_data import PRESETS, write_study  # noqa: E402

STAGES = (
    "loading inputs",
    "judge verdicts",
    "agreement",
    "human GLMMs",
    "bootstraps and leave-one-reader-out",
    "reader analysis",
    "surface features",
    "judge configurations",
    "sections on workers",
    "statistics on workers",
    "writing outputs",
)
SHORT = {
    "loading inputs": "load",
    "judge verdicts": "judge",
    "agreement": "agree",
    "human GLMMs": "glmm",
    "bootstraps and leave-one-reader-out": "uncert",
    "reader analysis": "readers",
    "surface features": "surface",
    "judge configurations": "configs",
    "sections on workers": "batch",
    "statistics on workers": "graph",
    "writing outputs": "write",
}
#: the statistics: every stage but reading the inputs and writing the outputs (what --jobs spreads)
STATISTICS = tuple(s for s in STAGES if s not in ("loading inputs", "writing outputs"))
_STAGE_LINE = re.compile(r"^\[\s*([0-9.]+)s\] (.+)\.\.\.$")


def study_paths(name: str, tmp: Path) -> tuple[list[str], Path | None]:
    """The audit-run arguments of a study (and the humans file of its single cell, if one)."""
    if name == "fixture":
        d = ROOT / "fixtures" / "deployment"
        return [
            str(d / "judge.csv"),
            str(d / "humans.csv"),
            "--pairs",
            str(d / "pairs.csv"),
            "--stories",
            str(d / "stories.csv"),
            "--dev-judge",
            str(ROOT / "fixtures" / "dev" / "judge.csv"),
            "--dev-humans",
            str(ROOT / "fixtures" / "dev" / "humans.csv"),
        ], None
    judge, humans = write_study(tmp / name, PRESETS[name])
    one_cell = PRESETS[name].criteria == 1 and PRESETS[name].systems == 2
    return [str(judge), str(humans)], humans if one_cell else None


class TreeMemory:
    """The peak of the summed PSS (proportional set size) of a process and all its descendants, sampled."""

    def __init__(self, pid: int, every: float | None = 0.2):
        self.pid, self.every, self.peak = pid, every, float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self, psutil) -> float:
        root = psutil.Process(self.pid)
        total = 0
        for proc in [root, *root.children(recursive=True)]:
            try:
                info = proc.memory_full_info()
                total += getattr(info, "pss", info.rss)
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        return total / 2**20

    def _run(self) -> None:
        if self.every is None:  # not sampled: the peak stays nan
            return
        try:
            import psutil
        except ImportError:
            return
        peak = 0.0
        while not self._stop.is_set():
            try:
                peak = max(peak, self._sample(psutil))
            except psutil.NoSuchProcess:
                break
            self._stop.wait(self.every)
        self.peak = peak

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _stage_name(name: str) -> str:
    # with --jobs N the statistics run as one task graph: "the statistics on N workers" (before it,
    # the sections after the cells ran as one batch: "... and the other sections on N workers")
    if " and the other sections on " in name:
        return "sections on workers"
    if name.startswith("the statistics on "):
        return "statistics on workers"
    return name


def run_audit(args: list[str], out: Path, tree_memory: bool = True) -> dict:
    """One `audit run` process: wall time, peak RSS (MB) and seconds per stage (``tree_memory``:
    sample the process tree's PSS meanwhile; each sample costs ~8 ms of CPU, which the audit's
    workers feel when they keep every core busy)."""
    cmd = [sys.executable, "-m", "judge_transfer_audit", "run", *args, "--out", str(out)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with TreeMemory(proc.pid, every=0.2 if tree_memory else None) as tree:
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"audit run failed ({os.waitstatus_to_exitcode(status)}): {err[-2000:]}")
    marks = [(float(m.group(1)), m.group(2)) for m in map(_STAGE_LINE.match, err.splitlines()) if m]
    total = next((float(x) for x in re.findall(r"^\(([0-9.]+) s\)$", err, re.M)), wall)
    stages = {}
    for (t0, name), (t1, _) in zip(marks, marks[1:] + [(total, "")]):
        stages[_stage_name(name)] = t1 - t0
    # the stage messages print tenths of a second; the run's timings.json has the stages' own clock
    # readings (every stage but writing the outputs, which it is written during)
    timings = out / "timings.json"
    if timings.exists():
        import json

        for stage in json.loads(timings.read_text()).get("stages", []):
            stages[_stage_name(stage["stage"])] = float(stage["seconds"])
    cpu = usage.ru_utime + usage.ru_stime  # the process and the workers it waited for
    return {"wall": wall, "cpu": cpu, "peak_mb": usage.ru_maxrss / 1024, "tree_mb": tree.peak, "stages": stages}


def competitors(humans: Path, glmer_cache: Path | None) -> list[tuple[str, float, str]]:
    """One fit of the single cell's votes by each competitor: (name, seconds, estimate note)."""
    votes = pd.read_csv(humans)
    y = (votes["choice"] == "focal").to_numpy(float)
    pair = pd.factorize(votes["pair_id"])[0]
    reader = pd.factorize(votes["reader_id"])[0]
    frame = pd.DataFrame({"y": y, "pair": pair, "reader": reader})
    rows = []
    from judge_transfer_audit.statistics.glmm import fit_crossed_glmm

    t0 = time.perf_counter()
    ours = fit_crossed_glmm(y, {"pair": pair, "reader": reader})
    rows.append(("judge_transfer_audit.statistics.glmm (ours)", time.perf_counter() - t0, f"b0 {ours.b[0]:.4f}"))
    try:
        from judge_transfer_audit.statistics.glmm.rscript import rscript_available, run_glmer

        if rscript_available():
            import json

            path = None if glmer_cache is None else glmer_cache / f"glmer_{len(y)}.json"
            if path is not None and path.exists():
                out = json.loads(path.read_text())
            else:
                out = run_glmer(
                    frame.assign(pair="p" + frame["pair"].astype(str), reader="r" + frame["reader"].astype(str)),
                    "y ~ 1 + (1|pair) + (1|reader)",
                )
                if path is not None:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(out))
            fixef = out["fixef"][0] if isinstance(out["fixef"], list) else out["fixef"]
            rows.append(("lme4 glmer (R, timed in R)", float(out["time_fit"]), f"b0 {fixef:.4f}"))
    except Exception as exc:  # noqa: BLE001 - a benchmark reports a competitor that failed, it does not stop
        rows.append(("lme4 glmer", float("nan"), f"failed: {exc}"))
    dense_gb = len(y) * (pair.max() + reader.max() + 2) * 8 / 1e9
    try:
        import statsmodels.formula.api as smf

        if dense_gb > 2:
            raise MemoryError(f"its variance-component design is dense: {dense_gb:.0f} GB at this size")
        t0 = time.perf_counter()
        fit = smf.mixedlm(
            "y ~ 1", frame.assign(g=1), groups="g", vc_formula={"pair": "0 + C(pair)", "reader": "0 + C(reader)"}
        ).fit()
        rows.append(("statsmodels mixedlm (linear)", time.perf_counter() - t0, f"mean {fit.params.iloc[0]:.4f}"))
    except Exception as exc:  # noqa: BLE001
        rows.append(("statsmodels mixedlm", float("nan"), f"failed: {type(exc).__name__}: {exc}"[:80]))
    try:
        import gpboost as gpb

        t0 = time.perf_counter()
        model = gpb.GPModel(group_data=np.column_stack([pair, reader]), likelihood="bernoulli_logit")
        model.fit(y=y, X=np.ones((len(y), 1)))
        coef = float(np.asarray(model.get_coef()).ravel()[0])
        rows.append(("gpboost GLMM", time.perf_counter() - t0, f"b0 {coef:.4f}"))
    except ImportError:
        rows.append(("gpboost", float("nan"), "not installed (pip install gpboost)"))
    except Exception as exc:  # noqa: BLE001
        rows.append(("gpboost", float("nan"), f"failed: {type(exc).__name__}"))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=["fixture", "100k"], choices=["fixture", *PRESETS])
    parser.add_argument("--jobs", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--dask", action="store_true", help="also run on a Dask LocalCluster of 2 workers")
    parser.add_argument("--no-competitors", action="store_true")
    parser.add_argument("--glmer-cache", type=Path, default=None, help="folder caching glmer's fits per size")
    parser.add_argument(
        "--no-tree-memory",
        action="store_true",
        help="do not sample the process tree's PSS (tree MB nan): its ~8 ms of CPU per 0.2 s sample slows a run "
        "whose workers keep every core busy",
    )
    args = parser.parse_args(argv)
    cluster = None
    if args.dask:
        from distributed import LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    cols = [SHORT[s] for s in STAGES] + ["stats"]
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"{'study':9} {'setting':12} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} {'tree MB':>8} "
        + " ".join(f"{c:>7}" for c in cols)
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in args.studies:
            audit_args, humans = study_paths(name, tmp)
            settings = [(f"--jobs {j}", ["--jobs", str(j)]) for j in args.jobs]
            if cluster is not None:
                settings.append(("dask 2x1", ["--scheduler", cluster.scheduler_address]))
            for label, extra in settings:
                res = run_audit(
                    [*audit_args, *extra], tmp / f"out-{name}-{label.replace(' ', '')}", not args.no_tree_memory
                )
                st = res["stages"]
                print(
                    f"{name:9} {label:12} {res['wall']:7.1f} {res['cpu']:7.1f} "
                    + f"{res['peak_mb']:8.0f} {res['tree_mb']:8.0f} "
                    + " ".join(f"{st.get(s, float('nan')):7.2f}" for s in STAGES)
                    + f" {sum(st.get(s, 0.0) for s in STATISTICS):7.2f}",
                    flush=True,
                )
            if humans is not None and not args.no_competitors:
                for comp, secs, note in competitors(humans, args.glmer_cache):
                    print(f"{'':9} {comp:32} {secs:8.2f} s   {note}", flush=True)
    if cluster is not None:
        cluster.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
