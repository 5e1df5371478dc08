"""Analysis: pure functions from graded run records to statistics, transitions, drift and reports."""
