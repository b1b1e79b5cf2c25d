"""The dev section: its computation (compute.py), checks (checks.py, when it has any) and its report
and terminal renderers (render.py); registered in :mod:`judge_transfer_audit.sections.registry`."""
