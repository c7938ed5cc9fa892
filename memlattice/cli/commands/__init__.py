"""`memlattice` subcommands, one module each; every module has `register(subparsers)`."""

INTERRUPTED = 130  # the exit status of a command stopped by Ctrl-C (128 + SIGINT)
