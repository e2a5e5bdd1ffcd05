"""What works on a whole class: its submissions (submissions.py: what a class folder
holds, a Gradescope export's or Canvas's layout), `batch` (batch.py: the class graded
with one session), who each submission belongs to (roster.py: Gradescope's export,
roster CSVs, Canvas's gradebook; canvas.py: Canvas's bulk download), which submissions
are alike (similarity.py) and a class graded on a Slurm cluster (slurm.py)."""
