// Operations over graphql-transport-ws with the graphql-ws client, one socket for all.
//
//   node tests/node/ws_operations.mjs ws://127.0.0.1:8000/graphql <api-key> '<json>'
//
// <json> is a list of {query, variables?, operationName?, take?}: each is
// subscribed to in turn, and ends when the server completes it, sends an
// `error`, closes the socket, or (with `take`) after that many `next` messages.
// Prints one JSON list: per operation {next: [payloads], error: [GraphQL
// errors] | null, closed: {code, reason} | null, completed: bool}.
import { createClient } from "graphql-ws";
import WebSocket from "ws";

const [url, key, operations] = process.argv.slice(2);
let closed = null;
const client = createClient({
  url,
  webSocketImpl: WebSocket,
  connectionParams: key ? { authorization: `Bearer ${key}` } : {},
  retryAttempts: 0,
  lazy: true,
  on: { closed: (event) => { closed = { code: event.code, reason: event.reason }; } },
});

function run({ take, ...payload }) {
  return new Promise((resolve) => {
    const outcome = { next: [], error: null, closed: null, completed: false };
    const timer = setTimeout(() => { outcome.timedOut = true; stop(); resolve(outcome); }, 60000);
    const stop = client.subscribe(payload, {
      next: (value) => {
        outcome.next.push(value);
        if (take && outcome.next.length >= take) { clearTimeout(timer); stop(); resolve(outcome); }
      },
      error: (error) => {
        clearTimeout(timer);
        if (Array.isArray(error)) outcome.error = error;
        else outcome.closed = { code: error.code ?? null, reason: error.reason ?? String(error) };
        resolve(outcome);
      },
      complete: () => { clearTimeout(timer); outcome.completed = true; resolve(outcome); },
    });
  });
}

const results = [];
for (const operation of JSON.parse(operations)) {
  results.push(await run(operation));
}
await client.dispose();
console.log(JSON.stringify({ results, closed }));
