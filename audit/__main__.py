"""`python -m judge_transfer_audit ...` is the same as the `audit` command."""

from judge_transfer_audit.cli import run_main

run_main()
