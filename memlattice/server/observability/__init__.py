"""Request ids, JSON logs, Prometheus metrics and the HTTP guard in front of the app."""
