"""`make demo`: the embedded ledger fixture, the offline oracle model, and the pipeline over both."""
