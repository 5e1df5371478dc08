"""The checks a suite task passes: levels 1 and 3 (`validate`), the import check's script (`import_probe`), and
what the installed original says when a variant fails one (`original_blame`)."""
