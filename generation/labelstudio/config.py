"""The Label Studio labelling config of the blind pairwise study (Choices only).

Why ``Choices`` and not Label Studio's ``Pairwise`` tag: ``Pairwise`` records one selection
per task (``left`` or ``right``), so it can neither ask several criteria nor offer "No
difference". The config asks one required single choice per criterion plus ``overall``
("Story A" / "Story B", and "No difference" with ``allow_tie``), whose recorded values are
the aliases ``left`` / ``right`` / ``tie``. The import also reads ``pairwise`` results
(``value.selected``), for a project that uses its own ``Pairwise`` config.
"""

from __future__ import annotations

from typing import Sequence
from xml.sax.saxutils import quoteattr

OVERALL = "overall"
COMMENT = "comment"
LEFT_VALUES = frozenset({"left", "a", "story a", "story_a", "1"})
RIGHT_VALUES = frozenset({"right", "b", "story b", "story_b", "2"})
TIE_VALUES = frozenset({"tie", "equal", "same"})


def _title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def labelling_config(
    criteria: Sequence[str],
    *,
    definitions: dict[str, str] | None = None,
    include_overall: bool = True,
    allow_tie: bool = False,
    instructions: str = "Read the premise and both stories, then say which story is better on each criterion.",
) -> str:
    """Label Studio labelling-config XML: premise, two stories side by side, one forced
    choice per criterion (plus ``overall``), an optional comment.

    Choice values shown are "Story A"/"Story B"; their ``alias`` (what the export records)
    is ``left``/``right``.

    Parameters
    ----------
    criteria : sequence of str
        Criterion names, in the order asked; each becomes a ``<Choices name=...>``.
    definitions : dict of str to str, optional
        Criterion -> definition shown above the stories (the rubric's wording).
    include_overall : bool
        Add the ``overall`` question after the criteria.
    allow_tie : bool
        Add a "No difference" choice (alias ``tie``); off by default (forced choice).
    instructions : str
        Header shown first.

    Returns
    -------
    str
        The XML, to paste under *Labeling Interface -> Code*.
    """
    definitions = definitions or {}
    lines = ["<View>", f'  <Header value={quoteattr(instructions)} size="4"/>']
    if definitions:
        lines.append('  <View style="padding: 0.5em; background: #f6f6f6; border-radius: 4px;">')
        for name in criteria:
            if name in definitions:
                lines.append(
                    f"    <Header value={quoteattr(_title(name) + ': ' + ' '.join(definitions[name].split()))} "
                    'size="6"/>'
                )
        lines.append("  </View>")
    lines += [
        '  <Header value="Premise" size="5"/>',
        '  <Text name="premise" value="$premise"/>',
        '  <View style="display: flex; gap: 1.5em;">',
        '    <View style="flex: 50%;">',
        '      <Header value="Story A" size="5"/>',
        '      <Text name="story_left" value="$story_left"/>',
        "    </View>",
        '    <View style="flex: 50%;">',
        '      <Header value="Story B" size="5"/>',
        '      <Text name="story_right" value="$story_right"/>',
        "    </View>",
        "  </View>",
    ]
    questions = list(criteria) + ([OVERALL] if include_overall and OVERALL not in criteria else [])
    for name in questions:
        label = "Overall, which story do you prefer?" if name == OVERALL else f"{_title(name)}: which story is better?"
        lines += [
            f'  <Header value={quoteattr(label)} size="5"/>',
            f'  <Choices name={quoteattr(name)} toName="premise" choice="single-radio" required="true" '
            'showInline="true">',
            '    <Choice value="Story A" alias="left"/>',
            '    <Choice value="Story B" alias="right"/>',
        ]
        if allow_tie:
            lines.append('    <Choice value="No difference" alias="tie"/>')
        lines.append("  </Choices>")
    lines += [
        '  <Header value="Comment (optional): why?" size="5"/>',
        f'  <TextArea name="{COMMENT}" toName="premise" rows="3" maxSubmissions="1" editable="true" required="false"/>',
        "</View>",
    ]
    return "\n".join(lines) + "\n"
