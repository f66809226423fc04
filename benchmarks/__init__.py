"""Benchmarks of levy-sklearn, run from the repository root as ``python -m benchmarks.<name>``."""
