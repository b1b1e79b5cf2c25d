"""judge-audit: does an automatic judge transfer to the data it is about to judge?

The public API (docs/api.md)::

    import judge_transfer_audit as audit
    result = audit.run("judge.csv", "humans.csv", pairs="pairs.csv")   # paths or DataFrames
    result.status, result.cells_frame()
    audit.write(result, "audit-out")          # result.json, report.html, junit.xml, CSVs
    again = audit.load_result("audit-out/result.json")

The names are imported lazily, so ``import judge_transfer_audit`` stays cheap for the command line.
"""

__version__ = "0.1.0"

__all__ = ["run", "load_result", "write", "AuditResult", "Policy", "load_policy", "__version__"]

_LAZY = {
    "run": ("judge_transfer_audit.api", "run"),
    "load_result": ("judge_transfer_audit.api", "load_result"),
    "write": ("judge_transfer_audit.api", "write"),
    "AuditResult": ("judge_transfer_audit.results.result", "AuditResult"),
    "Policy": ("judge_transfer_audit.model.policy", "Policy"),
    "load_policy": ("judge_transfer_audit.model.policy", "load_policy"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'judge_transfer_audit' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
