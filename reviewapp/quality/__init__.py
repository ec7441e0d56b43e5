"""Reviewer quality: gold answers scored against their gold labels, pausing, second looks."""
