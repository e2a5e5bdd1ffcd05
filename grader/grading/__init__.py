"""Grading one submission, stage by stage. job.py describes a grade as data (the
submissions, the rubric, the options); pipeline.py runs the stages in order for one
submission, within a session.py Session (what the grading of several submissions
shares: the machine, the cached reference, the seed, the workspace):

  collect.py     unpack the submission safely and find the student files
  plan.py        what is built from which files: a part per task, one integration build
  checks/        the code's checks: the code rules on what the compiler sees
                 (rules_engine, forbidden), what the compiler made (compiled,
                 object_code), compute-sanitizer on the GPU build (sanitizer)
  build.py       the reference (cached) and the submission's builds, linked to the
  prebuilt.py    prebuilt harness (its objects and commands, built once a machine)
  sandbox.py     running untrusted programs: bubblewrap's jail, limits, scrubbed
                 environment, an unprivileged user
  checking.py    the build and check stage: every part built, its cases run as soon as
                 it is built
  correctness/   the cases, run by the submission and decided by the trusted reference
                 (check), and the handout's applications (applications)
  fault.py       on a failing integration case or application: the task at fault, from
                 builds with one of the student's tasks each (the others the grader's stand-ins)
  timing.py      the submission timed against the reference on the GPU
  score.py       points from the results, by the rubric
  assemble.py    the submission's result, made once from what the stages returned

budget.py is a submission's time budget; cross_checks.py what a GPU grade learns beyond its
own cases. Each stage returns what it found (outcomes.py) to the next; assemble.py alone
makes the model of ../results.py from them, which ../report/ writes."""
