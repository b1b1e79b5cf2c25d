"""The floor: errors, ids, seeds, serialisation, optional dependencies, progress, guarded files."""
