"""constant-externalization: constants moved to JSON read by a generated loader."""
