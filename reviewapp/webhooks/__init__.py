"""Webhooks: endpoints, signed deliveries, their tasks and pages."""
