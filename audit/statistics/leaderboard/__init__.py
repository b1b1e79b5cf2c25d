"""The Bradley-Terry leaderboard, its bootstrap and its diagnostics."""
