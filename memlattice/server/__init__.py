"""The running service: the Starlette app, HTTP auth, the explorer and observability."""
