"""Differential validation: variants compile, import, and keep every test outcome of the original."""
