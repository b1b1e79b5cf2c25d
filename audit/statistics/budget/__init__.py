"""The label budget: how many more human votes would decide a cell."""
