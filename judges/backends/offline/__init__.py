"""The offline backend: a deterministic judge with no model and no network (`judge.py`), and the
aligner that sets a claim against the passage sentence it was taken from (`align.py`)."""
