"""Named protocols (the papers' and our own defaults) as YAML package data, validated by pydantic."""
