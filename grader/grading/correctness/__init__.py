"""Correctness: each case run by the submission's driver in the sandbox and decided by
the trusted reference (check.py), and the handout's applications run on the
integration build, decided the same way (applications.py)."""
