// GraphiQL at GET /graphql, bundled here like the explorer so that it works without
// internet and under the same Content-Security-Policy (scripts, styles and fonts from
// this origin only). Strawberry's own page loads seven files from a CDN instead.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { GraphiQL } from "graphiql";
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import "graphiql/style.css";
import "./graphiql.css";

// The explorer keeps the API key for the tab under this name (src/api.ts); reusing it
// spares pasting the key twice. Without one, the headers tab says what to send.
const API_KEY_STORAGE = "memlattice.explorer.apiKey";

const key = sessionStorage.getItem(API_KEY_STORAGE);

function initialHeaders(): string {
  const value = key ? `Bearer ${key}` : "Bearer <your API key, when the server requires keys>";
  return JSON.stringify({ Authorization: value }, null, 2);
}

// The key goes on the fetcher as well: GraphiQL fetches the schema before its headers
// tab is read, and that first request would be refused. What the tab says wins.
// Subscriptions go over graphql-transport-ws on the same path; the headers tab becomes
// the connection_init payload, where the server reads `Authorization`.
const fetcher = createGraphiQLFetcher({
  url: `${location.origin}/graphql`,
  subscriptionUrl: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
  headers: key ? { Authorization: `Bearer ${key}` } : {},
  wsConnectionParams: key ? { Authorization: `Bearer ${key}` } : {},
});

createRoot(document.getElementById("graphiql")!).render(
  <StrictMode>
    <GraphiQL fetcher={fetcher} defaultHeaders={initialHeaders()} shouldPersistHeaders={false} />
  </StrictMode>,
);
