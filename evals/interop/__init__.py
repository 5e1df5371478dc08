"""The ecosystem's formats in and out (SWE-bench predictions)."""
