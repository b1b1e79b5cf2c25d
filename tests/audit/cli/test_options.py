"""Options shared between commands are declared once (audit/cli/options.py): same names,
same validation, one settings object."""

from __future__ import annotations

import click
import pytest

from judge_transfer_audit.cli import features as features_cmd
from judge_transfer_audit.cli import run as run_cmd
from judge_transfer_audit.cli.exit_status import ExitStatus
from judge_transfer_audit.cli.options import parse_scale, perplexity_config
from judge_transfer_audit.detectors.perplexity.config import PerplexityConfig


def _options(command: click.Command) -> dict[str, click.Option]:
    return {p.name: p for p in command.params if isinstance(p, click.Option)}


def test_run_and_features_declare_the_same_perplexity_options():
    run, features = _options(run_cmd.command), _options(features_cmd.command)
    names = {n for n in run if n.startswith("perplexity_")} | {"allow_download"}
    assert len(names) == 11
    for name in names:
        a, b = run[name], features[name]
        assert (a.opts, a.type.to_info_dict(), a.default) == (b.opts, b.type.to_info_dict(), b.default), name


@pytest.mark.parametrize(
    "args, message",
    [
        (["--perplexity-url", "http://127.0.0.1:9"], "needs --perplexity-server-model"),
        (
            ["--perplexity-url", "http://127.0.0.1:9", "--perplexity-server-model", "m", "--perplexity-model", "x"],
            "not both",
        ),
        (["--perplexity-model", "x", "--perplexity-batch-size", "0"], "--perplexity-batch-size"),
        (["--perplexity-model", "x", "--perplexity-dtype", "float8"], "--perplexity-dtype"),
    ],
)
@pytest.mark.parametrize("command", ["run", "features"])
def test_both_commands_refuse_the_same_perplexity_mistakes(tmp_path, capsys, command, args, message):
    from judge_transfer_audit.cli import main

    (tmp_path / "s.csv").write_text("pair_id,system,text\np1,a,x\n", encoding="utf-8")
    files = (
        ["run", str(tmp_path / "s.csv"), str(tmp_path / "s.csv"), "--out", str(tmp_path / "o")]
        if command == "run"
        else ["features", str(tmp_path / "s.csv"), "-o", str(tmp_path / "f.csv")]
    )
    assert main(files + args) == ExitStatus.USAGE_ERROR
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists() and not (tmp_path / "f.csv").exists()


def test_perplexity_config_is_the_detectors_own_settings_object():
    assert perplexity_config(model=None, url=None, server_model=None) is None
    config = perplexity_config(model="m", url=None, server_model=None, batch_size=4)
    assert config == PerplexityConfig(model="m", batch_size=4)


@pytest.mark.parametrize("value", ["5,1", "1", "a,b", "1,nan", "1,2,3"])
def test_scale_option_uses_the_loaders_parser(value):
    from judge_transfer_audit.core.errors import InputError
    from judge_transfer_audit.inputs.load import parse_scale as loader_parse

    with pytest.raises(click.BadParameter):
        parse_scale(None, None, value)
    with pytest.raises(InputError):
        loader_parse(value)


def test_scale_option_accepts_what_the_loader_accepts():
    assert parse_scale(None, None, "1,5") == (1.0, 5.0) == parse_scale(None, None, "1:5")


def test_audit_spec_has_no_second_level():
    from judge_transfer_audit.model.spec import AuditSpec

    assert not hasattr(AuditSpec(), "level")  # the human interval's level is policy.transfer.level


def _every_command() -> dict[str, click.Command]:
    """Every subcommand of ``audit`` by its full name (``labelstudio push``)."""
    import judge_transfer_audit.cli as cli

    group = next(v for v in vars(cli).values() if isinstance(v, click.Group))

    def walk(command, prefix=()):
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from walk(sub, (*prefix, name))
        else:
            yield " ".join(prefix), command

    return dict(walk(group))


def test_every_seed_and_tables_out_option_has_one_declaration():
    """Every --seed takes the same non-negative range; reliability and consistency share --out."""
    from judge_transfer_audit.cli.options import SEED

    commands = _every_command()
    seeds = {name: _options(cmd)["seed"] for name, cmd in commands.items() if "seed" in _options(cmd)}
    assert {"run", "generate", "reliability", "labelstudio push"} <= set(seeds)
    assert {s.type.to_info_dict()["min"] for s in seeds.values()} == {SEED.min}
    assert {s.type.to_info_dict()["max"] for s in seeds.values()} == {SEED.max}
    outs = {name: _options(commands[name])["out"] for name in ("reliability", "consistency")}
    assert outs["reliability"].opts == outs["consistency"].opts == ["-o", "--out"]


@pytest.mark.parametrize("argv", [["run", "j.csv", "h.csv", "--seed", "-1"], ["reliability", "r.csv", "--seed", "-5"]])
def test_a_negative_seed_is_a_usage_error_not_an_internal_one(argv, capsys):
    from judge_transfer_audit.cli import main

    assert main(argv) == ExitStatus.USAGE_ERROR
    assert "--seed" in capsys.readouterr().err
