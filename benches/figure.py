"""The self-check of the benches/ scripts' Python parts (as `figure` in lib.sh):
a figure that is missing, None, not a number or 0 stops the run with an error
naming it, rather than a row of zeroes. Imported from the heredocs with
sys.path.insert(0, "<repo>/benches")."""
import math
import sys


def figure(name, value, zero=False):
    """VALUE as a float; exits 1 naming NAME if it is missing, not a number, or 0 (unless zero)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        sys.exit(f"bench: figure '{name}' is missing or not a number (read {value!r})")
    if math.isnan(v) or math.isinf(v):
        sys.exit(f"bench: figure '{name}' is not a finite number (read {value!r})")
    if v == 0 and not zero:
        sys.exit(f"bench: figure '{name}' is 0: the run measured nothing or the figure was misread")
    return v
