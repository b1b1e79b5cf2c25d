"""judge_transfer_audit.inputs.humans: a judge file given as the human file is named as such."""

from __future__ import annotations

from judge_transfer_audit.inputs import load_audit_data

from .helpers import HUMANS, JUDGE, PAIRS, problems, write


def test_swapped_judge_and_human_files_get_one_problem_each(tmp_path):
    j, h, p = (
        write(tmp_path, "judge.csv", JUDGE),
        write(tmp_path, "humans.csv", HUMANS),
        write(tmp_path, "pairs.csv", PAIRS),
    )
    probs = problems(lambda: load_audit_data(h, j, pairs=p))
    assert len(probs) == 2, [str(q) for q in probs]
    by_file = {q.file.rsplit("/", 1)[-1]: q for q in probs}
    assert "looks like a judge file" in by_file["judge.csv"].message
    assert "audit run JUDGE HUMANS" in by_file["judge.csv"].fix
    assert "looks like the human file" in by_file["humans.csv"].message
    assert by_file["humans.csv"].column == "reader_id"


def test_judge_file_with_a_reader_id_column_but_one_row_per_output_is_fine(tmp_path):
    judge = JUDGE.replace("score\n", "score,reader_id\n", 1)
    judge = "\n".join(ln if i == 0 else ln + ",r1" for i, ln in enumerate(judge.splitlines())) + "\n"
    data = load_audit_data(
        write(tmp_path, "judge.csv", judge),
        write(tmp_path, "humans.csv", HUMANS),
        pairs=write(tmp_path, "pairs.csv", PAIRS),
    )
    assert len(data.judge_scores) == 4


def test_dev_humans_given_the_dev_judge_file(tmp_path):
    dev_j = write(tmp_path, "dj.csv", "item_id,system,criterion,score\nd1,alpha,empathy,3\n")
    probs = problems(
        lambda: load_audit_data(
            write(tmp_path, "judge.csv", JUDGE),
            write(tmp_path, "humans.csv", HUMANS),
            pairs=write(tmp_path, "pairs.csv", PAIRS),
            dev_judge=dev_j,
            dev_humans=dev_j,
        )
    )
    [q] = [q for q in probs if "looks like a judge file" in q.message]
    assert "--dev-humans" in q.fix
