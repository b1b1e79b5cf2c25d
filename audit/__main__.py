"""`python -m audit ...` is the same as the `audit` command."""

from audit.cli import run_main

run_main()
