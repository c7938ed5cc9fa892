"""Adapters for the frameworks agents are built on, each an optional extra of the client.

    pip install './client[langgraph]'    # memlattice_client.integrations.langgraph
    pip install './client[langchain]'    # memlattice_client.integrations.langchain
    pip install './client[llamaindex]'   # memlattice_client.integrations.llamaindex

Nothing here is imported by `memlattice_client` itself, so the base client keeps
needing httpx and pydantic only; importing an adapter without its framework
raises ImportError naming the extra. See docs/integrations.md.
"""
