"""The data model: audit data, run spec, policy, tie rules, check statuses, result types."""
