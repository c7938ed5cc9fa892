// An Apollo Client for Memlattice: queries and mutations over HTTP, subscriptions
// over graphql-ws on the same /graphql, the API key on both, and a cache that
// merges `memories` pages the Relay way.
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { relayStylePagination } from "@apollo/client/utilities";
import { OperationTypeNode } from "graphql";
import { createClient } from "graphql-ws";

export interface MemlatticeOptions {
  /** The service's GraphQL endpoint, e.g. "https://memory.example.com/graphql". */
  url: string;
  /** An API key (`mlk_...`); omit it against a keyless development server. */
  apiKey?: string;
  /** A WebSocket class where the runtime has none (Node 20: the `ws` package). */
  webSocketImpl?: unknown;
}

export function makeCache(): InMemoryCache {
  return new InMemoryCache({
    typePolicies: {
      Query: {
        fields: {
          // One list per filter: the page arguments (first/after/last/before) are
          // not part of the cache key, so fetchMore's pages merge into one list.
          memories: relayStylePagination(["filter"]),
        },
      },
      // Memory, Edge, AuditEntry ... are normalised by their `id` (Apollo's default
      // `__typename:id`); ids are unique across namespaces.
    },
  });
}

export function makeClient(options: MemlatticeOptions): ApolloClient {
  const authorization = options.apiKey ? `Bearer ${options.apiKey}` : undefined;
  const http = new HttpLink({
    uri: options.url,
    headers: authorization ? { authorization } : {},
  });
  const ws = new GraphQLWsLink(
    createClient({
      url: options.url.replace(/^http/, "ws"),
      // The key goes in connection_init; a refused key closes the socket with 4403.
      connectionParams: authorization ? { authorization } : {},
      ...(options.webSocketImpl ? { webSocketImpl: options.webSocketImpl } : {}),
    }),
  );
  const link = ApolloLink.split(
    (operation) => operation.operationType === OperationTypeNode.SUBSCRIPTION,
    ws,
    http,
  );
  return new ApolloClient({ link, cache: makeCache() });
}
