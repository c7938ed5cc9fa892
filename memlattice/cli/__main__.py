"""`python -m memlattice.cli`: the same as the `memlattice` command."""

from memlattice.cli import main

main()
