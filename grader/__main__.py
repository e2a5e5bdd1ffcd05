"""Entry point: python3 -m grader ..."""
import sys

from .entry import main

sys.exit(main())
