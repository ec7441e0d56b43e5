"""Writes. Views, API endpoints, tasks and commands call these; they hold the business rules."""
