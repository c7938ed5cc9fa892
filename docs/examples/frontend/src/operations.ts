// The operations the app sends. graphql-codegen reads them (codegen.ts) and writes
// src/gql/: `graphql(...)` then returns a TypedDocumentNode, so Apollo knows each
// result's and each variable's TypeScript type, from the schema's own descriptions.
import { graphql } from "./gql";

export const MemoryCard = graphql(`
  fragment MemoryCard on Memory {
    id
    content
    tags
    createdAt
    version
  }
`);

export const WriteMemory = graphql(`
  mutation WriteMemory($input: MemoryInput!) {
    writeMemory(input: $input) {
      ...MemoryCard
    }
  }
`);

// One page of a namespace's memories, newest first. `first`/`after` page forward,
// `last`/`before` backward; relayStylePagination (apollo.ts) merges the pages.
export const MemoryPage = graphql(`
  query MemoryPage(
    $filter: MemoryFilterInput!
    $first: Int
    $after: String
    $last: Int
    $before: String
  ) {
    memories(filter: $filter, first: $first, after: $after, last: $last, before: $before) {
      totalCount
      pageInfo {
        hasNextPage
        hasPreviousPage
        startCursor
        endCursor
      }
      edges {
        cursor
        node {
          ...MemoryCard
        }
      }
    }
  }
`);

export const MemoryEvents = graphql(`
  subscription MemoryEvents($namespace: String!, $after: String) {
    memoryEvents(namespace: $namespace, after: $after) {
      seq
      cursor
      kind
      memoryId
      missed
      memory {
        ...MemoryCard
      }
    }
  }
`);
