"""The audit's result: the typed, versioned AuditResult, its tables, derived checks and diffs."""
