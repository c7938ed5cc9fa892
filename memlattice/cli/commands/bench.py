"""`memlattice bench`: run one of the repository's benchmarks (bench/).

Each prints figures and asserts nothing. Each starts a private Neo4j (removed
afterwards) unless NEO4J_URI is set. The benchmarks live in the repository's
`bench/` folder, next to the `memlattice` package; they need the `dev` extra
(`pip install -e '.[dev]'`). Arguments after the name go to the benchmark
(`memlattice bench latency --help` lists them).

  latency           GraphQL `search` p50/p95 at 10k and 100k memories
  ingest            memories/s through writeMemories beside a bare UNWIND
  locomo            recall@10 / hit@10 on the LoCoMo dev set, per mode
  filtered-recall   recall@10 of scoped vector search, 100% to 0.01% selectivity
  provision         Neo4j provisioning, cold and warm
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import inspect
import signal
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from memlattice.core.errors import ValidationError

if TYPE_CHECKING:  # `memlattice --help` imports no more than argparse needs
    from memlattice.core.settings import Settings

BENCHMARKS = {
    "latency": "bench.latency",
    "ingest": "bench.ingest",
    "locomo": "bench.locomo",
    "filtered-recall": "bench.filtered_recall",
    "provision": "bench.provision",
    "backup": "bench.backup",
}

EPILOG = textwrap.dedent("""\
    examples:
      memlattice bench ingest --count 5000
      NEO4J_URI=bolt://127.0.0.1:7687 memlattice bench latency
      memlattice bench filtered-recall --help
    """)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="run a benchmark (latency, ingest, locomo, ...)",
                            description=__doc__, epilog=EPILOG,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", choices=sorted(BENCHMARKS), help="which benchmark")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments for the benchmark (see `memlattice bench NAME --help`)")
    parser.set_defaults(func=cmd_bench)


def _import_benchmark(module: str) -> ModuleType:
    """`bench` is a folder of the repository, not an installed package: import it from
    the checkout this `memlattice` was installed from (editable installs)."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "bench" / "__init__.py").exists():
        raise ValidationError(f"no bench/ folder next to {root / 'memlattice'}; benchmarks run"
                              " from a source checkout (pip install -e '.[dev]')")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ValidationError(f"benchmark {module} needs {exc.name}; install the dev extra:"
                              " pip install -e '.[dev]'") from exc


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, for as long as this lasts.

    A benchmark stops the private Neo4j it started in `finally` blocks, which Ctrl-C
    runs but SIGTERM's default action (die at once) skips, leaving the server behind.
    """
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_bench(args: argparse.Namespace, settings: Settings) -> None:
    module = _import_benchmark(BENCHMARKS[args.name])
    main = module.main
    sys.argv = [f"memlattice bench {args.name}", *args.args]
    with sigterm_as_interrupt():
        try:
            if inspect.iscoroutinefunction(main):
                asyncio.run(main())
            else:
                main()
        except KeyboardInterrupt:
            print(f"memlattice bench {args.name}: interrupted; what it started is stopped",
                  file=sys.stderr)
            sys.exit(130)
