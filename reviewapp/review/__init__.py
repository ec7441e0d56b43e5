"""The human review: the queue, leases, decisions and their pages."""
