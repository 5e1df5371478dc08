"""proxy-imports: imports routed through chains of generated proxy modules."""
