"""Test helpers: real projects from PyPI (`pypi`) and their test commands (`projects`)."""
