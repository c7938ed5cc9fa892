"""GraphQL types, queries and mutations: thin, they validate and call graph/."""
