// Apollo Client 4 with its persisted-query link, as a frontend sets it up, against a live server.
//
//   node tests/node/apollo_persisted.mjs http://127.0.0.1:8000/graphql <api-key> <namespace>
//
// Runs a query (hashed GET), a mutation (hashed POST), and the query again
// from a fresh cache. Prints one JSON object: each operation's data (or its
// error) and every request the link sent: method, whether it carried the
// document's text, and the persisted-query hash.
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { createHash } from "node:crypto";

const [url, key, namespace] = process.argv.slice(2);
const requests = [];

async function recordingFetch(uri, init = {}) {
  const address = new URL(uri);
  const body = init.body ? JSON.parse(init.body) : null;
  const extensions = body ? body.extensions
    : JSON.parse(address.searchParams.get("extensions") ?? "null");
  const response = await fetch(uri, init);
  requests.push({
    method: init.method ?? "GET",
    withText: Boolean(body ? body.query : address.searchParams.get("query")),
    hash: extensions?.persistedQuery?.sha256Hash ?? null,
    status: response.status,
  });
  return response;
}

const COUNT = gql`query Count($ns: String!) { memories(filter: {namespace: $ns}) { totalCount } }`;
const WRITE = gql`mutation Write($input: MemoryInput!) { writeMemory(input: $input) { id content } }`;

function client() {
  const persisted = new PersistedQueryLink({
    sha256: (text) => createHash("sha256").update(text).digest("hex"),
    useGETForHashedQueries: true,
  });
  const http = new HttpLink({ uri: url, fetch: recordingFetch,
                              headers: key ? { authorization: `Bearer ${key}` } : {} });
  return new ApolloClient({ link: persisted.concat(http), cache: new InMemoryCache() });
}

async function outcome(promise) {
  try {
    const { data, error } = await promise;
    return error ? { error: String(error) } : { data };
  } catch (error) {
    return { error: String(error) };
  }
}

const first = client();
const results = {};
results.query = await outcome(first.query({ query: COUNT, variables: { ns: namespace } }));
results.mutation = await outcome(first.mutate({ mutation: WRITE,
  variables: { input: { namespace, content: "written through a persisted mutation" } } }));
results.again = await outcome(client().query({ query: COUNT, variables: { ns: namespace },
                                               fetchPolicy: "network-only" }));
console.log(JSON.stringify({ results, requests }));
