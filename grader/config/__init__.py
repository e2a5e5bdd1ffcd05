"""What is graded and how much it is worth, read from data/: the assignment's manifest
(assignment.py: tasks, operators, exit codes), the rubric (rubric.py: points, limits,
forbidden constructs, timing) and the grading cases it names (cases.py), through
toml_table.py's typed access to one TOML table."""
