"""Reading and validating the audit's input files; the entry point is :func:`load_audit_data`.

Modules: ``formats`` (CSV/TSV/JSONL/Parquet to a table of strings with line numbers),
``problems`` (collect every problem, count exclusions), ``layout`` (shared checks),
``humans``, ``judge``, ``pairs``, ``resolve`` (votes and judge outputs against the pairs),
``stories``, ``load`` (assembly).
"""

from judge_transfer_audit.inputs.load import load_audit_data

__all__ = ["load_audit_data"]
