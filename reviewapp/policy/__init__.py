"""The routing policy: which answers a human sees, its pages and re-routing."""
