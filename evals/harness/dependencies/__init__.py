"""Dependencies of an instance venv: conda environments as pip requirements."""
