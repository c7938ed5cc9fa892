"""Use cases: what resolvers, the CLI and MCP call.

Services combine the graph, embeddings and search, and publish events after commit."""
