"""load_audit_data on the shipped fixture and on every accepted shape of the data contract."""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judge_transfer_audit.inputs import load_audit_data
from judge_transfer_audit.model.data import AuditData
from tests.audit.inputs.helpers import HUMANS, JUDGE, PAIRS, basic, write

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures"


def load_fixture(**kw) -> AuditData:
    d, v = FIX / "deployment", FIX / "dev"
    return load_audit_data(
        d / "judge.csv",
        d / "humans.csv",
        pairs=d / "pairs.csv",
        stories=d / "stories.csv",
        dev_judge=v / "judge.csv",
        dev_humans=v / "humans.csv",
        **kw,
    )


@pytest.fixture(scope="module")
def fixture_data() -> AuditData:
    return load_fixture()


def test_fixture_loads_with_the_documented_shape(fixture_data):
    d = fixture_data
    assert len(d.votes) == 6300 and len(d.pairs) == 150
    assert d.votes["reader_id"].nunique() == 7
    assert d.criteria == (
        "authenticity",
        "empathy",
        "engagement",
        "emotion_provocation",
        "narrative_complexity",
        "overall",
    )
    assert d.matchups == ("gpt5-auto vs gpt4o", "gpt5-high vs gpt4o", "r1 vs v3")
    assert d.judges == ("ensemble", "gpt-4.1", "claude-3.7", "gemini-2.5", "llama-3.3")
    assert len(d.judge_scores) == 300 * 5 * 5 and d.judge_verdicts is None
    assert len(d.stories) == 300 and len(d.dev_judge) == 2000 and len(d.dev_humans) == 2000
    assert d.focal_source == "pairs file" and d.human_shape == "pairwise"
    assert set(d.pairs["focal"]) == {"gpt5-auto", "gpt5-high", "r1"}
    assert d.exclusions == ()


def documented_columns(frame: str) -> list[str]:
    """The columns docs/data-contract.md ("What you get") lists for ``frame``: the bullet
    "- `frame`: a, b (remark), c." up to its first full stop, remarks dropped."""
    text = (ROOT / "docs" / "data-contract.md").read_text()
    found = re.search(rf"^- `{frame}`[^:]*: (.+?)\.(\s|$)", re.sub(r"\s*\([^)]*\)", "", text), re.M | re.S)
    assert found, f"no bullet for {frame} in docs/data-contract.md"
    return [c.strip() for c in " ".join(found.group(1).split()).split(",")]


def test_fixture_frames_have_the_documented_columns(fixture_data):
    d = fixture_data
    assert documented_columns("votes")[:3] == ["pair_id", "reader_id", "criterion"]  # the parse itself
    for name in ("votes", "pairs", "judge_scores"):
        assert list(getattr(d, name).columns) == documented_columns(name), name
    for frame in (d.votes, d.pairs, d.judge_scores, d.stories, d.dev_judge, d.dev_humans):
        for col in frame.columns:
            numeric = col in ("y", "seconds", "order", "line", "sample", "score", "rating")
            assert pd.api.types.is_numeric_dtype(frame[col]) if numeric else pd.api.types.is_string_dtype(frame[col])
    v = d.votes
    assert (v["y"] == (v["choice"] == v["focal"]).astype(float)).all()  # forced choice: no ties
    assert v["order"].tolist() == list(range(len(v)))
    assert v["seconds"].notna().all() and (v["comment"] != "").sum() > 0


def test_fixture_loads_fast():
    """CPU time, so that a busy shared machine does not make the check flaky (~0.07 s measured)."""
    load_fixture()
    t = time.process_time()
    load_fixture()
    assert time.process_time() - t < 0.5


def test_sources_record_sha256_of_each_file(fixture_data):
    roles = {s.role: s for s in fixture_data.sources}
    assert set(roles) == {"judge", "humans", "pairs", "stories", "dev_judge", "dev_humans"}
    h = roles["humans"]
    assert h.sha256 == hashlib.sha256(Path(h.path).read_bytes()).hexdigest()
    assert (h.format, h.n_rows, h.layout) == ("csv", 6300, "pairwise-long")


def test_line_numbers_point_at_the_source_rows(fixture_data):
    lines = (FIX / "deployment" / "humans.csv").read_text().splitlines()
    v = fixture_data.votes.sample(20, random_state=1)
    for _, row in v.iterrows():
        assert lines[row["line"] - 1].startswith(f"{row['pair_id']},{row['reader_id']},{row['criterion']},")
    # stories hold multi-line quoted texts: line = where the record starts
    text_lines = (FIX / "deployment" / "stories.csv").read_text().split("\n")
    for _, row in fixture_data.stories.iterrows():
        assert text_lines[row["line"] - 1].startswith(f"{row['pair_id']},{row['system']},")


def test_small_pairwise_study(tmp_path):
    d = basic(tmp_path)()
    assert d.votes["choice"].tolist() == ["alpha", "beta", "tie", "alpha"]
    np.testing.assert_array_equal(d.votes["y"], [1.0, 0.0, np.nan, 1.0])
    assert d.votes["line"].tolist() == [2, 3, 4, 5]
    s = d.judge_scores
    assert s["score"].isna().sum() == 1  # unparsable output kept as missing, never imputed
    assert [(e.role, e.n_rows) for e in d.exclusions] == [("judge", 1)]
    assert "never imputed" in d.exclusions[0].reason


def test_drop_invalid_removes_unparsable_outputs_and_counts_them(tmp_path):
    d = basic(tmp_path, drop_invalid=True)()
    assert d.judge_scores["score"].notna().all() and len(d.judge_scores) == 3
    assert [(e.role, e.n_rows) for e in d.exclusions] == [("judge", 1)]


def test_pairs_derived_from_judge_file(tmp_path):
    d = basic(tmp_path, pairs=None)()
    assert d.pairs["matchup"].tolist() == ["alpha vs beta"] * 2
    assert d.focal_source == "automatic"  # alpha and beta are in 2 pairs each: code-point order decides
    d2 = basic(tmp_path, pairs=None, focal="beta")()
    assert set(d2.pairs["focal"]) == {"beta"} and d2.focal_source == "--focal"
    assert d2.pairs["matchup"].tolist() == ["beta vs alpha"] * 2
    np.testing.assert_array_equal(d2.votes["y"], [0.0, 1.0, np.nan, 0.0])


def test_focal_option_overrides_pairs_file_and_accepts_lists(tmp_path):
    d = basic(tmp_path, focal=["beta"])()
    assert set(d.pairs["focal"]) == {"beta"} and d.focal_source == "--focal"
    assert d.pairs["matchup"].tolist() == ["alpha vs beta"] * 2  # the file's label is kept


def test_focal_list_picks_first_listed_name_in_each_pair(tmp_path):
    judge = JUDGE + "p3,gamma,empathy,1\np3,beta,empathy,1\n"
    humans = HUMANS + "p3,r1,empathy,gamma\n"
    d = basic(tmp_path, humans=humans, judge=judge, pairs=None, focal="beta,alpha")()
    assert dict(zip(d.pairs["pair_id"], d.pairs["focal"])) == {"p1": "beta", "p2": "beta", "p3": "beta"}
    assert d.pairs["matchup"].tolist() == ["beta vs alpha", "beta vs alpha", "beta vs gamma"]


def test_a_b_choices_resolve_through_pairs(tmp_path):
    humans = "pair_id,reader_id,criterion,choice\np1,r1,empathy,A\np1,r2,empathy,b\np2,r1,empathy,Tie\n"
    judge = JUDGE.replace("p2,alpha,empathy,\n", "p2,alpha,empathy,1\n")
    d = basic(tmp_path, humans=humans, judge=judge)()
    assert d.votes["choice"].tolist() == ["alpha", "beta", "tie"]


def test_case_insensitive_columns_and_criteria(tmp_path):
    humans = "Pair_ID,READER_ID,Criterion,Choice\np1,r1,Empathy,alpha\np2,r1,EMPATHY,beta\n"
    judge = JUDGE.replace("pair_id,system", "PAIR_ID,System")
    d = basic(tmp_path, humans=humans, judge=judge)()
    assert d.criteria == ("empathy",) and len(d.votes) == 2


def test_wide_pairwise_humans_and_wide_scalar_judge(tmp_path):
    humans = "pair_id,reader_id,empathy,overall,seconds\np1,r1,alpha,beta,12\np2,r1,beta,beta,8\n"
    judge = "pair_id,system,empathy,judge\np1,alpha,4,j1\np1,beta,3,j1\np2,alpha,2,j1\np2,beta,5,j1\n"
    d = basic(tmp_path, humans=humans, judge=judge)()
    assert d.votes[["criterion", "choice", "line"]].values.tolist() == [
        ["empathy", "alpha", 2],
        ["overall", "beta", 2],
        ["empathy", "beta", 3],
        ["overall", "beta", 3],
    ]
    assert d.votes["seconds"].tolist() == [12.0, 12.0, 8.0, 8.0]
    assert d.judges == ("j1",) and len(d.judge_scores) == 4
    assert {s.role: s.layout for s in d.sources}["humans"] == "pairwise-wide"


def test_pairwise_judge_verdicts_with_configurations_and_samples(tmp_path):
    judge = (
        "pair_id,criterion,choice,judge,sample\n"
        "p1,empathy,alpha,big,0\np1,empathy,B,big,1\np2,empathy,invalid,big,0\np2,empathy,tie,small,0\n"
    )
    d = basic(tmp_path, judge=judge)()
    assert d.judge_scores is None
    assert d.judge_verdicts["choice"].tolist() == ["alpha", "beta", "invalid", "tie"]
    assert d.judge_verdicts["sample"].tolist() == [0, 1, 0, 0]
    assert d.judges == ("big", "small")
    assert [(e.role, e.n_rows) for e in d.exclusions] == [("judge", 1)]
    d2 = basic(tmp_path, judge=judge, drop_invalid=True)()
    assert "invalid" not in set(d2.judge_verdicts["choice"])


def test_pairwise_judge_without_pairs_file_reads_systems_from_choices(tmp_path):
    judge = "pair_id,criterion,choice\np1,empathy,alpha\np2,empathy,beta\n"
    d = basic(tmp_path, judge=judge, pairs=None)()
    assert d.pairs[["system_a", "system_b"]].values.tolist() == [
        ["alpha", "beta"],
        ["alpha", "beta"],
    ]  # first named first
    assert set(d.pairs["focal"]) == {"alpha"}


SCALAR = """\
item_id,reader_id,criterion,rating,group_id,reader_group
i1,r1,empathy,4,g1,expert
i2,r1,empathy,2,g1,expert
i3,r1,empathy,4,g1,expert
i1,r2,empathy,1,g1,novice
i2,r2,empathy,3,g1,novice
i3,r2,empathy,5,g1,novice
i4,r1,empathy,3,g2,expert
"""
SCALAR_JUDGE = """\
item_id,system,criterion,score
i1,xx,empathy,5
i2,yy,empathy,4
i3,xx,empathy,3
i4,yy,empathy,3
"""


def test_scalar_ratings_become_prompt_matched_pairs(tmp_path):
    d = basic(tmp_path, humans=SCALAR, judge=SCALAR_JUDGE, pairs=None)()
    assert d.human_shape == "scalar"
    p = d.pairs
    # i1~i3 compares two outputs of xx (a self-matchup): left out, with its votes, and noted
    assert p["pair_id"].tolist() == ["i1~i2", "i2~i3"]
    assert p[["system_a", "system_b"]].values.tolist() == [["xx", "yy"], ["yy", "xx"]]
    assert p["matchup"].tolist() == ["xx vs yy", "xx vs yy"] and set(p["focal"]) == {"xx"}
    v = d.votes
    assert len(v) == 4 and (v["line"] == 0).all()
    # r1: 4 vs 2 -> xx; r2: 1 vs 3 -> yy.  i2~i3: r1 2 vs 4 -> xx; r2 3 vs 5 -> xx
    assert v["choice"].tolist() == ["xx", "yy", "xx", "xx"]
    assert v["reader_group"].tolist() == ["expert", "novice"] * 2
    np.testing.assert_array_equal(v["y"], [1, 0, 1, 1])
    # i4 is alone in its group: its rating and its judge score are counted, not silently dropped
    assert sorted((e.role, e.n_rows) for e in d.exclusions) == [("humans", 1), ("judge", 1)]
    s = d.judge_scores
    assert s[s["pair_id"] == "i2~i3"][["system", "item_id", "score"]].values.tolist() == [
        ["yy", "i2", 4.0],
        ["xx", "i3", 3.0],
    ]
    assert any("same system" in n and "2 vote(s)" in n for n in d.notes)
    assert {r.role: (r.read, r.used, r.n_excluded) for r in d.rows} == {"humans": (7, 6, 1), "judge": (4, 3, 1)}


def test_scalar_wide_ratings_and_stories_by_item(tmp_path):
    humans = "item_id,reader_id,group_id,empathy,engagement\ni1,r1,g,4,2\ni2,r1,g,2,2\n"
    judge = "item_id,system,empathy,engagement\ni1,xx,5,1\ni2,yy,4,1\n"
    stories = "item_id,system,text,ppl,source\ni1,xx,Once.,12.5,web\ni2,yy,Twice.,,web\n"
    st = write(tmp_path, "stories.csv", stories)
    d = basic(tmp_path, humans=humans, judge=judge, pairs=None, stories=st)()
    assert d.votes["choice"].tolist() == ["xx", "tie"]
    assert d.stories[["pair_id", "system", "item_id", "text"]].values.tolist() == [
        ["i1~i2", "xx", "i1", "Once."],
        ["i1~i2", "yy", "i2", "Twice."],
    ]
    assert d.stories["ppl"].tolist()[0] == 12.5 and np.isnan(d.stories["ppl"].tolist()[1])
    assert "source" not in d.stories.columns and any("source" in n for n in d.notes)


@pytest.mark.parametrize("ext", ["tsv", "jsonl", "parquet"])
def test_other_formats_give_the_same_frames(tmp_path, ext):
    ref = basic(tmp_path)()
    paths = {}
    for name, text in (("humans", HUMANS), ("judge", JUDGE), ("pairs", PAIRS)):
        frame = pd.read_csv(write(tmp_path, f"{name}.csv", text), dtype=str, keep_default_na=False)
        path = tmp_path / f"{name}.{ext}"
        if ext == "tsv":
            frame.to_csv(path, sep="\t", index=False)
        elif ext == "jsonl":
            frame.to_json(path, orient="records", lines=True)
        else:
            frame.to_parquet(path)
        paths[name] = path
    d = load_audit_data(paths["judge"], paths["humans"], pairs=paths["pairs"])
    pd.testing.assert_frame_equal(d.votes.drop(columns="line"), ref.votes.drop(columns="line"))
    pd.testing.assert_frame_equal(d.judge_scores.drop(columns="line"), ref.judge_scores.drop(columns="line"))
    pd.testing.assert_frame_equal(d.pairs, ref.pairs)
    expected_first = {"tsv": 2, "jsonl": 1, "parquet": 1}[ext]
    assert d.votes["line"].iloc[0] == expected_first


def test_dev_set_is_loaded(tmp_path):
    dh = write(tmp_path, "dev_h.csv", "item_id,reader_id,criterion,rating\nd1,a,empathy,3\nd2,a,empathy,4\n")
    dj = write(tmp_path, "dev_j.csv", "item_id,criterion,score\nd1,empathy,2\nd2,empathy,5\n")
    d = basic(tmp_path, dev_judge=dj, dev_humans=dh)()
    assert d.dev_judge[["item_id", "judge", "score"]].values.tolist() == [["d1", "judge", 2.0], ["d2", "judge", 5.0]]
    assert d.dev_humans["rating"].tolist() == [3.0, 4.0]


def test_scale_accepts_values_inside_it(tmp_path):
    d = basic(tmp_path, scale=(1, 5))()
    assert d.judge_scores["score"].max() == 4.0


def test_group_id_of_the_judge_file_names_the_premise_without_pairs_file(tmp_path):
    judge = (
        "pair_id,system,criterion,score,group_id\np1,alpha,empathy,4,g7\np1,beta,empathy,3,g7\n"
        "p2,alpha,empathy,1,\np2,beta,empathy,2,\n"
    )
    d = basic(tmp_path, judge=judge, pairs=None)()
    assert d.pairs["group_id"].tolist() == ["g7", ""]


def test_one_sided_judge_cells_are_noted(tmp_path):
    judge = JUDGE + "p1,alpha,overall,4\n"
    humans = HUMANS + "p1,r1,overall,alpha\n"
    d = basic(tmp_path, judge=judge, humans=humans)()
    assert any("score only one of the two systems" in n and n.startswith("judge: 1 ") for n in d.notes)


def test_audit_data_round_trips_through_serialize(tmp_path):
    from judge_transfer_audit.core.serialize import from_jsonable, to_jsonable

    d = basic(tmp_path)()
    back = from_jsonable(AuditData, to_jsonable(d))
    assert back.sources == d.sources and back.exclusions == d.exclusions and back.notes == d.notes
    pd.testing.assert_frame_equal(back.votes, d.votes, check_dtype=False)


def test_wide_pairwise_judge(tmp_path):
    judge = "pair_id,judge,empathy,overall\np1,j,alpha,B\np2,j,tie,invalid\n"
    d = basic(tmp_path, judge=judge)()
    assert d.judge_verdicts[["criterion", "choice", "line"]].values.tolist() == [
        ["empathy", "alpha", 2],
        ["overall", "beta", 2],
        ["empathy", "tie", 3],
        ["overall", "invalid", 3],
    ]
    assert {s.role: s.layout for s in d.sources}["judge"] == "pairwise-wide"


def test_rating_without_partner_rating_is_counted(tmp_path):
    humans = SCALAR + "i1,r3,empathy,2,g1,expert\n"  # r3 rated only one item of g1
    d = basic(tmp_path, humans=humans, judge=SCALAR_JUDGE, pairs=None)()
    counts = {e.reason: e.n_rows for e in d.exclusions}
    assert sorted(counts.values()) == [1, 1, 1] and len(d.votes) == 4
    assert any("same reader" in r for r in counts)
