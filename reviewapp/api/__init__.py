"""The JSON API and the ways answers come in: REST, OpenTelemetry traces."""
