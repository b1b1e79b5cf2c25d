"""The verdict: per-cell transfer decisions, checks and the one-sentence summary."""

from audit.verdict.checks import cell_checks, overall_status, summary_checks, verdict_sentence

__all__ = ["cell_checks", "overall_status", "summary_checks", "verdict_sentence"]
