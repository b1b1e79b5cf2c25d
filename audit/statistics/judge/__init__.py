"""The judge's own statistics: agreement with readers, panels, position effects."""
