"""The statistics: GLMMs, agreement, reliability, readers, resampling, leaderboard, budget.

None of it imports the scheduler: a task runner is passed in."""
