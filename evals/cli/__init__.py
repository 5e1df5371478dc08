"""The one `repoanchor` command line: a thin typer layer over the library."""
