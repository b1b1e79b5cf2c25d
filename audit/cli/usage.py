"""Command-line usage helpers: choices that suggest the near miss, command lists that give each
description whole."""

from __future__ import annotations

import click

from judge_transfer_audit.core.errors import closest


class Choice(click.Choice):
    """A choice among fixed names; a near miss gets "did you mean" (``even_split`` ->
    ``even-split``)."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            match = closest(str(value), [str(c) for c in self.choices])
            if match is not None:
                exc.message = f"{exc.message} Did you mean '{match}'?"
            raise


class Group(click.Group):
    """A group whose command list gives each command's first sentence whole (click cuts it to
    the width left of the names, mid-sentence, with "...")."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
