"""Benchmark: story generation throughput against a scripted server with fixed latency.

Competitors:

* a hand-glued loop (the usual script: ``urllib`` in a for-loop, one request per story,
  no retries, no journal) -- the figure the toolkit must not fall far behind when serial;
* ``generate_stories`` with ``concurrency = 1`` (journal + retries + blinding overhead);
* ``generate_stories`` with ``concurrency = 8`` (what the concurrency limit buys).

Each server answer takes ``--latency`` seconds (default 0.05) and every story is accepted at
the first attempt, so the numbers measure overhead and concurrency, not retries.

Run: ``python benchmarks/generate_stories.py [--stories 48] [--repeats 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judge_transfer_audit.generation.generate import generate_stories  # noqa: E402
from judge_transfer_audit.generation.protocol import load_protocol  # noqa: E402
from tests.support.openai_server import Reply, ScriptedServer, Slow, story  # noqa: E402


def hand_loop(url: str, premises: pd.DataFrame) -> None:
    for premise in premises["premise"]:
        for model in ("alpha", "beta"):
            body = json.dumps(
                {"model": model, "messages": [{"role": "user", "content": premise}], "temperature": 1.0}
            ).encode()
            request = urllib.request.Request(
                url + "/chat/completions", data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                json.loads(response.read())["choices"][0]["message"]["content"]


def toolkit(url: str, premises: pd.DataFrame, concurrency: int) -> None:
    systems = {
        name: {
            "template": "standard",
            "provider": {"provider": "openai", "model": name, "base_url": url, "max_concurrency": 8},
        }
        for name in ("alpha", "beta")
    }
    protocol = load_protocol(
        overrides={"systems": systems, "matchups": [{"focal": "alpha", "other": "beta"}], "concurrency": concurrency}
    )
    with tempfile.TemporaryDirectory() as out:
        generate_stories(premises, protocol, out, rng=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stories", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    n_premises = args.stories // 2
    premises = pd.DataFrame(
        {
            "premise_id": [f"q{i}" for i in range(n_premises)],
            "premise": [f"Premise number {i}." for i in range(n_premises)],
        }
    )
    reply = Slow(Reply(story(500)), args.latency)
    with ScriptedServer(responder=lambda body: reply, lifetime_s=600, max_requests=100_000) as server:
        cases = {
            "hand-glued urllib loop (serial)": lambda: hand_loop(server.url, premises),
            "generate_stories, concurrency 1": lambda: toolkit(server.url, premises, 1),
            "generate_stories, concurrency 8": lambda: toolkit(server.url, premises, 8),
        }
        medians = {}
        for name, fn in cases.items():
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            medians[name] = statistics.median(times)
    base = medians["hand-glued urllib loop (serial)"]
    print(f"{args.stories} stories, server latency {args.latency * 1000:.0f} ms, median of {args.repeats} runs")
    for name, seconds in medians.items():
        print(
            f"  {name:34s} {seconds:7.3f} s   {seconds / args.stories * 1000:6.1f} ms/story   ratio to hand loop "
            f"{seconds / base:5.2f}"
        )


if __name__ == "__main__":
    main()
