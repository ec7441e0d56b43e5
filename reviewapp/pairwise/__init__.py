"""Pairwise comparisons: an admin compares two judges on the same answers, or two pipelines'
answers to the same questions; reviewers choose per differing claim (or per answer) A, B, both
right or both wrong, blind to which side is which; results are win rates with 95% intervals."""
