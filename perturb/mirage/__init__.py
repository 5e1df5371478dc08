"""Support code shared by the RepoMirage tree transforms (import analysis, module naming, resources)."""
