// The recipe, run end to end against a live server (tests/integration/test_frontend_recipe.py
// runs it): subscribe, write, watch the events arrive, then page through the namespace
// forward and backward with relayStylePagination. Prints what it saw as JSON.
//
//   MEMLATTICE_URL=http://127.0.0.1:8000/graphql MEMLATTICE_NAMESPACE=demo/frontend node dist/run.js
import type { ApolloClient } from "@apollo/client";
import { filter, firstValueFrom, from } from "rxjs";
import WebSocket from "ws";

import { makeClient } from "./apollo";
import type { MemoryCardFragment, MemoryPageQuery, MemoryPageQueryVariables } from "./gql/graphql";
import { MemoryEvents, MemoryPage, WriteMemory } from "./operations";

type PageInfo = MemoryPageQuery["memories"]["pageInfo"];

interface Paged {
  ids: string[];
  pages: number;
  pageInfo: PageInfo;
  totalCount: number;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = 60_000): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)),
  ]);
}

/** Page through `memories` with fetchMore until the end, in one direction. The cache
 *  (relayStylePagination) merges every page into the watched query's one list. */
async function pageThrough(client: ApolloClient, first: MemoryPageQueryVariables,
                           backward: boolean): Promise<Paged> {
  const query = client.watchQuery({ query: MemoryPage, variables: first });
  const active = query.subscribe({});
  try {
    const loaded = await withTimeout(firstValueFrom(
      from(query).pipe(filter((r) => r.dataState === "complete"))), "first page");
    let data: MemoryPageQuery | undefined = loaded.data;
    let pages = 1;
    for (;;) {
      const info: PageInfo | undefined = data?.memories.pageInfo;
      if (!info) throw new Error("no page");
      const more = backward ? info.hasPreviousPage : info.hasNextPage;
      if (!more) break;
      await query.fetchMore({
        variables: backward ? { before: info.startCursor } : { after: info.endCursor },
      });
      pages += 1;
      // What the watched query shows now: every page so far, merged by the field policy.
      data = client.readQuery({ query: MemoryPage, variables: first }) ?? undefined;
      if (pages > 100) throw new Error("pages never end");
    }
    const merged = data?.memories;
    if (!merged) throw new Error("no merged list");
    return {
      ids: merged.edges.map((edge) => edge.node.id),
      pages,
      pageInfo: merged.pageInfo,
      totalCount: merged.totalCount,
    };
  } finally {
    active.unsubscribe();
  }
}

async function main(): Promise<void> {
  const options = {
    url: env("MEMLATTICE_URL"),
    apiKey: process.env.MEMLATTICE_API_KEY,
    webSocketImpl: WebSocket, // a browser has its own
  };
  const namespace = env("MEMLATTICE_NAMESPACE");
  const count = Number(process.env.MEMLATTICE_COUNT ?? "7");
  const client = makeClient(options);

  // 1. Live updates: subscribe first; SUBSCRIBED says nothing is missed from here on.
  const events: string[] = [];
  let subscribed!: () => void;
  let allWritten!: () => void;
  const ready = new Promise<void>((resolve) => { subscribed = resolve; });
  const arrived = new Promise<void>((resolve) => { allWritten = resolve; });
  const live = client.subscribe({ query: MemoryEvents, variables: { namespace } }).subscribe({
    next: ({ data, error }) => {
      if (error) throw error;
      const event = data?.memoryEvents;
      if (event?.kind === "SUBSCRIBED") subscribed();
      if (event?.kind === "WRITTEN" && event.memoryId) {
        events.push(event.memoryId);
        if (events.length === count) allWritten();
      }
    },
    error: (error: unknown) => { console.error(error); process.exit(2); },
  });
  await withTimeout(ready, "SUBSCRIBED");

  // 2. Writes, typed by codegen: `written` is a MemoryCardFragment.
  const written: MemoryCardFragment[] = [];
  for (let i = 0; i < count; i += 1) {
    const { data } = await client.mutate({
      mutation: WriteMemory,
      variables: {
        input: {
          namespace,
          content: `frontend recipe memory ${i}`,
          tags: ["frontend"],
          now: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(),
        },
      },
    });
    if (!data) throw new Error("no write result");
    written.push(data.writeMemory);
  }
  await withTimeout(arrived, "WRITTEN events");
  live.unsubscribe();

  // 3. Pages, merged by the cache: forward from the newest, and backward from the oldest,
  //    each on a cache of its own; and the whole list in one request to compare with.
  const forward = await pageThrough(makeClient(options), { filter: { namespace }, first: 3 },
                                    false);
  const backward = await pageThrough(makeClient(options), { filter: { namespace }, last: 3 },
                                     true);
  const whole = await makeClient(options).query({
    query: MemoryPage, variables: { filter: { namespace }, first: 500 },
  });
  const wholeIds = whole.data?.memories.edges.map((edge) => edge.node.id) ?? [];

  console.log(JSON.stringify({
    written: written.map((m) => m.id),
    events,
    forward,
    backward,
    whole: wholeIds,
  }));
  process.exit(0); // the WebSocket clients would keep Node alive
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
