"""Judging an answer: the worker's tasks, the judge service, jobs, the sweeper, liveness."""
