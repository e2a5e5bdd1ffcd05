"""Entry point: python3 -m grader ..."""
import sys

from grader.entry import main

sys.exit(main())
