"""Writes votes_pooled.csv and judge_pooled.csv: the three cases of votes.csv / judge.csv as
three matchups of one data set, with focal and other swapped in case 1 (categories 0 <-> 1 for
the readers and the judge), so that the matchups are not oriented alike. Run from this directory."""

import pandas as pd

v = pd.read_csv("votes.csv")
j = pd.read_csv("judge.csv")
swap = {0: 1, 1: 0, 2: 2, -1: -1}
v.loc[v.case == 1, "category"] = v.loc[v.case == 1, "category"].map(swap)
j.loc[j.case == 1, "judge"] = j.loc[j.case == 1, "judge"].map(swap)
v.to_csv("votes_pooled.csv", index=False)
j.to_csv("judge_pooled.csv", index=False)
