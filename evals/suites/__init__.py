"""Suites: a SWE-bench-format dataset in, validated tasks out (original, RepoMirage-Perturb, SPT, RepoMirage-Extend)."""
