"""The report reads right: a plain headline, the distance map at the top, every rate naming its system,
degenerate GLMM values marked, counts as integers, no empty labels, budgets beyond reach said so,
captions that wrap, tall figures in parts. All on the rendered HTML of the real fixture result."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest

from judge_transfer_audit.model.checks import Status
from judge_transfer_audit.reports.html import render_html
from judge_transfer_audit.reports.sections import MAP_ROWS, REACH_FACTOR, REACH_MIN, distance_map_figure, next_steps
from judge_transfer_audit.reports.terminal import render_summary


@pytest.fixture(scope="module")
def html(result) -> str:
    return render_html(result)


def _svg(page: str, fig_id: str) -> str:
    start = page.index(f'<svg id="{fig_id}"')
    return page[start : page.index("</svg>", start)]


def _words(counts: dict) -> str:
    fail, undecided, passed = counts["FAIL"], counts["INCONCLUSIVE"], counts["PASS"]
    first = "no cell fails" if fail == 0 else (f"{fail} cell fails" if fail == 1 else f"{fail} cells fail")
    last = "none pass" if passed == 0 else (f"{passed} passes" if passed == 1 else f"{passed} pass")
    return f"{first}, {undecided or 'none'} undecided, {last}"


def test_the_headline_says_the_counts_in_plain_words(result, html):
    expected = f"{result.status.value}: {_words(result.counts)}"
    agreement_fails = any(c.name == "agreement.decision" and c.status.value == "FAIL" for c in result.checks)
    assert agreement_fails  # the fixture's judge is also worse than a reader, pair by pair
    assert f'id="headline-text">{expected}; agreement decision FAIL</p>' in html
    assert result.counts["FAIL"] > 0  # the fixture has failing cells: the sentence is not the all-pass one
    assert "compared cells: " not in result.verdict  # not "3 of 18 compared cells: 3 FAIL, 0 PASS, ..."


def test_the_distance_map_is_at_the_top_with_every_cell_and_its_decision(result, html):
    at = html.index('id="fig-distance-map"')
    assert at < html.index('id="dev-validity"') and at < html.index('id="transfer"')
    svg = _svg(html, "fig-distance-map")
    for c in result.cells:
        d = c.transfer.difference.estimate
        if not math.isnan(d):
            assert f">{100 * d:+.1f}</text>" in svg
    assert svg.count(">FAIL</text>") == result.counts["FAIL"]
    assert svg.count(">undecided</text>") == result.counts["INCONCLUSIVE"]
    for criterion in {c.criterion for c in result.cells}:
        assert f">{criterion}</text>" in svg


def test_the_distance_map_comes_in_parts_past_a_page_of_matchups(result):
    cells = tuple(replace(c, matchup=f"m{i:03d} vs x") for i, c in enumerate(result.cells))
    many = replace(result, cells=cells * 3)
    parts = distance_map_figure(many)
    n = len({c.matchup for c in many.cells})
    assert n > MAP_ROWS and len(parts) == -(-n // MAP_ROWS)
    assert [p["id"] for p in parts][:2] == ["fig-distance-map", "fig-distance-map-2"]
    assert all(p["svg"].count(" vs x</text>") <= MAP_ROWS for p in parts)


def test_every_rate_names_the_system_it_is_for(result, html):
    body = html[html.index('id="transfer-table"') :]
    body = body[: body.index("</table>")]
    assert body.count("rates for ") == min(len(result.cells), 24)
    for c in result.cells[:5]:
        assert f"rates for {c.focal}" in body
    worst = html[html.index('id="worst-cells"') : html.index('id="next-steps"')]
    assert worst.count("rates for ") == min(5, len(result.cells))
    terminal = render_summary(result, max_cells=50)
    for line in terminal.splitlines():
        if " judge " in line and "band [" in line:
            assert re.search(r"judge \S+% for \S", line), line


def test_degenerate_glmm_values_are_marked_in_the_heat_map_and_the_intervals(result):
    cell = next(c for c in result.cells if not c.human.glmm.degenerate)
    flagged = replace(cell, human=replace(cell.human, glmm=replace(cell.human.glmm, degenerate=True)))
    cells = tuple(flagged if c is cell else c for c in result.cells)
    page = render_html(replace(result, cells=cells))
    heatmaps = re.findall(r'<svg id="fig-heatmap-\d+".*?</svg>', page, flags=re.S)
    marked = [s for s in heatmaps if "degenerate GLMM fit" in s]
    assert len(marked) == 1  # the flagged cell's matchup map, not the pooled one nor the others
    assert re.search(r">\(\d+%\)\*</text>", marked[0])
    assert "degenerate GLMM fit (1)" in _svg(page, "fig-bootstrap")
    if not any(c.human.glmm.degenerate for c in result.cells):  # nothing marked where nothing is degenerate
        plain = render_html(result)
        assert not any(
            "degenerate GLMM fit (an" in s for s in re.findall(r'<svg id="fig-heatmap.*?</svg>', plain, re.S)
        )


def test_counts_print_as_integers(result, html):
    assessed = next(c for c in result.checks if c.name == "transfer.assessed")
    assert float(assessed.value).is_integer()
    assert f">{int(assessed.value)}</td>" in html and f">{assessed.value:.3f}</td>" not in html
    # a count of readers, its value and threshold: "0" and "0" in the check's row, never "0.000"
    separation = next(c for c in result.checks if c.name == "readers.separation")
    row = re.search(r'<td class="mono checkname">readers\.separation</td>.*?</tr>', html, re.S).group(0)
    numbers = re.findall(r'<td class="num">(.*?)</td>', row)
    assert numbers == [str(int(separation.value)), str(int(separation.threshold))], numbers
    budget = html[html.index('id="label-budget"') :]
    head = budget[budget.index("<thead>") : budget.index("</thead>")]
    cols = re.findall(r"<th[^>]*>(.*?)</th>", head)
    k = [c.replace("<wbr>", "") for c in cols].index("readers_per_pair")
    row = budget[budget.index("<tbody>") :]
    first = re.findall(r"<td[^>]*>(.*?)</td>", row[: row.index("</tr>")])
    assert re.fullmatch(r"\d+|\d+\.\d*[1-9]\d*", first[k]), first[k]  # 7, never 7.000


def test_no_empty_label_or_caption_for_the_humans_panels_not_drawn(result):
    surface = result.surface.payload
    points = surface.scatter_points.assign(human_share=math.nan)
    bare = replace(surface, human_criterion="", scatter_points=points)
    page = render_html(replace(result, surface=replace(result.surface, payload=bare)))
    section = page[page.index('<section id="surface">') :]
    section = section[: section.index("</section>")]
    assert "humans&#39; criterion" not in section and "humans' criterion" not in section
    assert "Feature differences against the judge</h3>" in section
    caption = section[section.index("<figcaption>") : section.index("</figcaption>")]
    assert "right:" not in caption and "No humans' panels" in caption.replace("&#39;", "'")
    with_h = render_html(result)
    assert "humans&#39; criterion: <b>overall</b>" in with_h or "humans' criterion: <b>overall</b>" in with_h


def test_budgets_beyond_reach_are_said_so_with_the_cheapest_cell(result):
    steps = " ".join(next_steps(result))
    undecided = [c for c in result.cells if c.transfer.status is Status.INCONCLUSIVE and c.transfer.pairs_needed]

    def more(c):
        return c.transfer.pairs_needed - c.transfer.n_pairs

    far = [c for c in undecided if more(c) > max(REACH_FACTOR * c.transfer.n_pairs, REACH_MIN)]
    assert far, "the fixture has cells that more labels cannot decide"
    assert f"Beyond reach: {len(far)} cell(s)" in steps
    biggest = max(far, key=more)
    assert f"{biggest.matchup} / {biggest.criterion}: {more(biggest):,} more on {biggest.transfer.n_pairs:,}" in steps
    cheapest = min(undecided, key=more)
    assert f"The cheapest cell to decide is {cheapest.matchup} / {cheapest.criterion}" in steps
    within = steps.split("Beyond reach")[0]
    assert f"+{more(biggest):,}" not in within  # the unreachable pairs are not offered as a budget
    assert f"decide the {len(undecided) - len(far)} INCONCLUSIVE cell(s) within reach" in within


def test_table_captions_sit_above_their_tables_and_wrap(html):
    assert "<caption>" not in html
    assert html.count('<p class="table-caption">') >= 3
    css = html[html.index("<style>") : html.index("</style>")]
    assert ".table-caption" in css and "max-height: 95mm" not in css


def test_the_preference_figure_says_which_system_each_matchups_rates_are_for(result, html):
    """The fixture's matchups have three focal systems, so the axes say "the focal system" and the
    caption names each matchup's; one focal everywhere needs no caption (the axes name it)."""
    from dataclasses import replace

    from judge_transfer_audit.reports.sections import focals_caption

    focal = {c.matchup: c.focal for c in result.cells}
    assert len(set(focal.values())) > 1
    figure = html[html.index('data-figure="fig-preference"') :]
    caption = re.search(r"<figcaption>(.*?)</figcaption>", figure[: figure.index("</figure>")], re.S).group(1)
    for matchup, system in focal.items():
        assert f"{system} in {matchup}" in caption
    one = replace(result, cells=tuple(c for c in result.cells if c.matchup == result.cells[0].matchup))
    assert focals_caption(one) == ""
