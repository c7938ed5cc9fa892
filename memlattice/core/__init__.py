"""The bottom layer: the domain's vocabulary, errors, access rules and settings.

Nothing here does I/O or imports another layer of the package."""
