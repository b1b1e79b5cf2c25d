"""Shared fixtures: a scripted OpenAI-compatible server and a protocol pointing at it."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from tests.support.openai_server import ScriptedServer

FAST = {"timeout_s": 0.5, "max_retries": 3, "backoff_base_s": 0.005, "max_backoff_s": 0.05, "seed": 0}


@pytest.fixture
def server():
    with ScriptedServer(lifetime_s=60) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _quiet_provider_logs():
    logging.getLogger("judge_transfer_audit.generation.providers.openai").setLevel(logging.ERROR)
    yield
    logging.getLogger("judge_transfer_audit.generation.providers.openai").setLevel(logging.NOTSET)


def protocol_toml(
    url: str,
    *,
    systems=("alpha", "beta"),
    max_attempts: int = 10,
    extra: str = "",
    api_key_env: str | None = None,
    concurrency: int = 1,
) -> str:
    """A protocol file whose systems all talk to the scripted server (model = system name)."""
    lines = [f"max_attempts = {max_attempts}", f"concurrency = {concurrency}", extra]
    for name in systems:
        lines += [
            f"[systems.{name}]",
            'template = "standard"',
            f"[systems.{name}.provider]",
            'provider = "openai"',
            f'model = "{name}"',
            f'base_url = "{url}"',
        ]
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in FAST.items()]
        if api_key_env:
            lines.append(f'api_key_env = "{api_key_env}"')
    lines += ["[[matchups]]", f'focal = "{systems[0]}"', f'other = "{systems[1]}"']
    return "\n".join(lines) + "\n"


@pytest.fixture
def premises() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "premise_id": ["w1", "w2", "w3", "r1"],
            "premise": [
                "A lighthouse keeper finds a letter.",
                "Time stops for everyone but you.",
                "The last bookshop on Mars.",
                "Write about a reunion at a train station.",
            ],
            "kind": ["prompt", "prompt", "prompt", "instruction"],
        }
    )
