"""Gradescope's autograder: the zip (autograder.py, `gradescope-zip`) with its two
scripts, setup.sh (once, when the image is built) and run_autograder (per submission)."""
