// A thin GraphQL client over the service's public API (schema.graphql).
// The explorer uses only the operations any other client can use.

export type EdgeType = "RELATED" | "DERIVED" | "CONTRADICTS" | "SUPPORTS" | "SUPERSEDES";
export type Status = "ACTIVE" | "SUPERSEDED" | "FORGOTTEN";
export type Scope = "TASK" | "SESSION" | "USER" | "AGENT";
export type SearchMode = "LEXICAL" | "SEMANTIC" | "HYBRID";
export type ScoringMode = "SIMILARITY" | "HYBRID" | "RRF";

export const EDGE_TYPES: EdgeType[] = ["RELATED", "DERIVED", "CONTRADICTS", "SUPPORTS", "SUPERSEDES"];

export interface Memory {
  id: string;
  namespace: string;
  key: string | null;
  content: string;
  memoryType: string;
  value: unknown;
  summary: string | null;
  tags: string[];
  metadata: Record<string, unknown>;
  scope: Scope | null;
  agentId: string | null;
  userId: string | null;
  sessionId: string | null;
  taskId: string | null;
  status: Status;
  confidence: number;
  salience: number | null;
  source: string | null;
  sourceType: string | null;
  extractionMethod: string | null;
  provenance: unknown;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  version: number;
  accessCount: number;
  lastAccessedAt: string | null;
  embeddingModel: string | null;
  embeddingDimension: number | null;
  supersededBy: string | null;
  supersededAt: string | null;
  forgottenAt: string | null;
}

export interface Edge {
  id: string;
  type: EdgeType;
  sourceId: string;
  targetId: string;
  createdAt: string;
  metadata: Record<string, unknown>;
}

export interface AuditEntry {
  id: string;
  memoryId: string;
  operation: string;
  actor: string;
  at: string;
  version: number | null;
  details: unknown;
}

export interface PathStep {
  type: EdgeType;
  sourceId: string;
  targetId: string;
}

export interface SearchHit {
  memory: Memory;
  score: number;
  similarityScore: number | null;
  ftsScore: number | null;
  recencyScore: number | null;
  popularityScore: number | null;
  graphScore: number;
  boost: number;
  rerankScore: number | null;
  similarityRank: number | null;
  ftsRank: number | null;
  expanded: boolean;
  path: PathStep[];
  conflicts: Pick<Memory, "id" | "content" | "status">[];
  /** The memory that states a newer value of what this hit states (null: current). */
  outdatedBy: Pick<Memory, "id" | "content" | "createdAt"> | null;
  /** The update link behind `outdatedBy`. */
  update: Pick<MemoryUpdate, "id" | "status" | "confidence" | "reason"> | null;
}

export type UpdateStatus = "CANDIDATE" | "CONFIRMED" | "REJECTED";
export type UpdateKind = "UPDATE" | "CONTRADICTION";
export const UPDATE_STATUSES: UpdateStatus[] = ["CANDIDATE", "CONFIRMED", "REJECTED"];

/**
 * A newer memory states another value of an attribute an older one stated: found
 * by the rule set on write, or stated by a writer (proposeUpdate, or a write the
 * update judge's model judged).
 */
export interface MemoryUpdate {
  id: string;
  newer: Memory | null;
  older: Memory | null;
  status: UpdateStatus;
  kind: UpdateKind;
  confidence: number;
  reason: string;
  subject: string;
  attribute: string;
  matched: string[];
  createdAt: string | null;
  decidedAt: string | null;
  decidedBy: string | null;
  note: string | null;
  /** Who stated the link (a proposeUpdate caller, or the writer whose write the model judged); null: the rules found it. */
  proposedBy: string | null;
  /** The update judge's model that did not read this pair as an update ("model …"): search ignores the candidate until it is confirmed; null: not disputed. */
  disputedBy: string | null;
}

export interface SearchForm {
  namespace: string;
  query: string;
  mode: SearchMode | "";
  scoring: ScoringMode | "";
  preset: string;
  tags: string;
  tagsMatch: "any" | "all";
  memoryTypes: string;
  scope: Scope | "";
  agentId: string;
  userId: string;
  sessionId: string;
  taskId: string;
  expand: boolean;
  limit: number;
  /** Browsing only: which statuses to list (time travel ignores them). */
  statuses: Status[];
}

export const STATUSES: Status[] = ["ACTIVE", "SUPERSEDED", "FORGOTTEN"];

/** An error the API returned, with its stable `extensions.code`. */
export class ApiError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

const MEMORY_FIELDS = `
  id namespace key content memoryType value summary tags metadata scope agentId userId
  sessionId taskId status confidence salience source sourceType extractionMethod provenance
  createdAt updatedAt expiresAt version accessCount lastAccessedAt embeddingModel
  embeddingDimension supersededBy supersededAt forgottenAt`;

const EDGE_FIELDS = "id type sourceId targetId createdAt metadata";

const UPDATE_FIELDS = `
  id status kind confidence reason subject attribute matched createdAt decidedAt decidedBy note
  proposedBy disputedBy newer { ${MEMORY_FIELDS} } older { ${MEMORY_FIELDS} }`;

const API_KEY_STORAGE = "memlattice.explorer.apiKey";

export function loadApiKey(): string {
  return sessionStorage.getItem(API_KEY_STORAGE) ?? "";
}

export function saveApiKey(key: string): void {
  if (key) sessionStorage.setItem(API_KEY_STORAGE, key);
  else sessionStorage.removeItem(API_KEY_STORAGE);
}

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; retryAfter?: number } }[];
}

/**
 * How long the page waits, in all, for its turns when the server says "later"
 * (HTTP 429, RATE_LIMITED). The server refuses before anything runs, so a
 * refused query or mutation is sent again unchanged once its `Retry-After` has
 * passed. A busy server answers the page's parallel requests this way whenever
 * another key is active (the process shares itself among keys); a key over its
 * own limits may be told to wait longer, and then the person sees the refusal.
 */
const RATE_LIMIT_PATIENCE_S = 30;

const sleep = (seconds: number): Promise<void> => new Promise((done) => setTimeout(done, seconds * 1000));

/** Seconds the server asked the page to wait: the body's `retryAfter`, else `Retry-After`, else 1. */
function retryAfter(response: Response, body: GraphQLResponse<unknown> | null): number {
  const stated = body?.errors?.[0]?.extensions?.retryAfter ?? Number(response.headers.get("retry-after"));
  return typeof stated === "number" && Number.isFinite(stated) && stated > 0 ? stated : 1;
}

export async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  let waited = 0;
  for (;;) {
    const { response, body } = await post<T>(query, variables);
    const first = body?.errors?.[0];
    const refused = response.status === 429 || first?.extensions?.code === "RATE_LIMITED";
    if (refused) {
      const wait = retryAfter(response, body);
      if (waited + wait <= RATE_LIMIT_PATIENCE_S) {
        waited += wait;
        await sleep(wait);
        continue;
      }
    }
    if (!body) throw new ApiError(`HTTP ${response.status} ${response.statusText}`, `HTTP_${response.status}`);
    if (first) throw new ApiError(first.message, first.extensions?.code ?? "ERROR");
    if (!body.data) throw new ApiError(`HTTP ${response.status} without data`, `HTTP_${response.status}`);
    return body.data;
  }
}

/** One POST of an operation; `body` is null when the answer is not JSON. */
async function post<T>(query: string, variables: Record<string, unknown>): Promise<{ response: Response; body: GraphQLResponse<T> | null }> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-memlattice-actor": "explorer",
    // A person reading is not an agent recalling: the explorer's searches must
    // not raise the popularity of what it shows (docs/api.md).
    "x-memlattice-record-access": "false",
  };
  const key = loadApiKey();
  if (key) headers.authorization = `Bearer ${key}`;
  let response: Response;
  try {
    response = await fetch("/graphql", { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  } catch (exc) {
    throw new ApiError(`The service cannot be reached (${String(exc)})`, "NETWORK");
  }
  try {
    return { response, body: (await response.json()) as GraphQLResponse<T> };
  } catch {
    return { response, body: null };
  }
}

const csv = (text: string): string[] =>
  text.split(",").map((part) => part.trim()).filter((part) => part.length > 0);

/** The filter fields browsing and search share: tags, types, and `asOf` time travel. */
function commonFilter(form: SearchForm, asOf: string | null): Record<string, unknown> {
  const filter: Record<string, unknown> = { namespace: form.namespace.trim() };
  const tags = csv(form.tags);
  if (tags.length) filter[form.tagsMatch === "all" ? "tagsAll" : "tagsAny"] = tags;
  const types = csv(form.memoryTypes);
  if (types.length) filter.memoryTypes = types;
  if (asOf) filter.asOf = asOf;
  return filter;
}

/** Builds a `MemoryFilterInput` for browsing: scope ids and statuses sit on the filter. */
export function browseFilter(form: SearchForm, asOf: string | null): Record<string, unknown> {
  const filter = commonFilter(form, asOf);
  for (const field of ["agentId", "userId", "sessionId", "taskId"] as const) {
    if (form[field].trim()) filter[field] = form[field].trim();
  }
  if (form.scope) filter.scope = form.scope;
  if (!asOf && form.statuses.length) filter.statuses = form.statuses;
  return filter;
}

/** Builds a `SearchInput` from the form; empty fields are left to the server's defaults. */
export function searchInput(form: SearchForm, asOf: string | null = null): Record<string, unknown> {
  const filter = commonFilter(form, asOf);
  const input: Record<string, unknown> = { filter, limit: form.limit };
  if (form.query.trim()) input.query = form.query.trim();
  if (form.mode) input.mode = form.mode;
  if (form.scoring) input.scoring = form.scoring;
  if (form.preset) input.preset = form.preset;
  // Who is asking, beside `scope`, as a write names whom a memory belongs to.
  for (const field of ["agentId", "userId", "sessionId", "taskId"] as const) {
    if (form[field].trim()) input[field] = form[field].trim();
  }
  if (form.scope) input.scope = form.scope;
  if (form.expand) input.expansion = { maxExpand: 10, depth: 1 };
  return input;
}

export async function search(form: SearchForm, asOf: string | null = null): Promise<SearchHit[]> {
  const data = await graphql<{ search: SearchHit[] }>(
    `query Search($input: SearchInput!) {
      search(input: $input) {
        score similarityScore ftsScore recencyScore popularityScore graphScore boost rerankScore
        similarityRank ftsRank expanded path { type sourceId targetId }
        conflicts { id content status }
        outdatedBy { id content createdAt } update { id status confidence reason }
        memory { ${MEMORY_FIELDS} }
      }
    }`,
    { input: searchInput(form, asOf) },
  );
  return data.search;
}

export interface BrowsePage {
  memories: Memory[];
  total: number;
  hasNext: boolean;
  endCursor: string | null;
}

export const BROWSE_PAGE = 50;

/** A namespace's memories without a query, newest first (the `memories` connection). */
export async function browse(form: SearchForm, asOf: string | null, after: string | null = null): Promise<BrowsePage> {
  const data = await graphql<{
    memories: { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: Memory }[] };
  }>(
    `query Browse($filter: MemoryFilterInput!, $first: Int!, $after: String) {
      memories(filter: $filter, first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } edges { node { ${MEMORY_FIELDS} } }
      }
    }`,
    { filter: browseFilter(form, asOf), first: BROWSE_PAGE, after },
  );
  const page = data.memories;
  return {
    memories: page.edges.map((e) => e.node),
    total: page.totalCount,
    hasNext: page.pageInfo.hasNextPage,
    endCursor: page.pageInfo.endCursor,
  };
}

const TIMELINE_SIZE = 500;

/**
 * The moments a namespace changed (writes, supersedes, forgets), oldest first:
 * the stops of the time slider. Taken from the newest TIMELINE_SIZE memories.
 */
export async function timeline(namespace: string): Promise<string[]> {
  const data = await graphql<{
    memories: { edges: { node: Pick<Memory, "createdAt" | "supersededAt" | "forgottenAt"> }[] };
  }>(
    `query Timeline($filter: MemoryFilterInput!, $first: Int!) {
      memories(filter: $filter, first: $first) { edges { node { createdAt supersededAt forgottenAt } } }
    }`,
    { filter: { namespace, statuses: STATUSES }, first: TIMELINE_SIZE },
  );
  const moments = new Set<string>();
  for (const { node } of data.memories.edges) {
    for (const at of [node.createdAt, node.supersededAt, node.forgottenAt]) if (at) moments.add(at);
  }
  return [...moments].sort((a, b) => Date.parse(a) - Date.parse(b) || a.localeCompare(b));
}

/** The namespaces this key may read (the `namespaces` query), for the picker. */
export async function namespaces(): Promise<string[]> {
  const data = await graphql<{ namespaces: string[] }>("query Namespaces { namespaces(limit: 1000) }");
  return data.namespaces;
}

export interface MemoryDetail {
  memory: Memory;
  edges: Edge[];
  audit: AuditEntry[];
}

export async function memoryDetail(namespace: string, id: string): Promise<MemoryDetail> {
  const data = await graphql<{ memory: Memory; edges: Edge[]; auditTrail: AuditEntry[] }>(
    `query Detail($ns: String!, $id: ID!) {
      memory(namespace: $ns, id: $id) { ${MEMORY_FIELDS} }
      edges(namespace: $ns, id: $id) { ${EDGE_FIELDS} }
      auditTrail(namespace: $ns, id: $id) { id memoryId operation actor at version details }
    }`,
    { ns: namespace, id },
  );
  return { memory: data.memory, edges: data.edges, audit: data.auditTrail };
}

/** Relationships of several memories, as aliases of `edges`, ALIASES_PER_REQUEST per request. */
export async function edgesOfMany(namespace: string, ids: string[]): Promise<Edge[]> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += ALIASES_PER_REQUEST) batches.push(ids.slice(i, i + ALIASES_PER_REQUEST));
  const found = await Promise.all(batches.map(async (batch) => {
    const variables: Record<string, unknown> = { ns: namespace };
    const params = batch.map((id, i) => {
      variables[`id${i}`] = id;
      return `$id${i}: ID!`;
    });
    const fields = batch.map((_, i) => `e${i}: edges(namespace: $ns, id: $id${i}) { ${EDGE_FIELDS} }`);
    const data = await graphql<Record<string, Edge[]>>(
      `query ManyEdges($ns: String!, ${params.join(", ")}) { ${fields.join("\n")} }`, variables);
    return Object.values(data).flat();
  }));
  const unique = new Map(found.flat().map((edge) => [edge.id, edge]));
  return [...unique.values()];
}

export async function edgesOf(namespace: string, id: string): Promise<Edge[]> {
  const data = await graphql<{ edges: Edge[] }>(
    `query Edges($ns: String!, $id: ID!) { edges(namespace: $ns, id: $id) { ${EDGE_FIELDS} } }`,
    { ns: namespace, id },
  );
  return data.edges;
}

/** The server caps aliases per operation (MEMLATTICE_LIMIT_MAX_ALIASES, 30 by default). */
const ALIASES_PER_REQUEST = 20;

/**
 * Several memories by id, as aliases of `memory`, in requests of up to
 * ALIASES_PER_REQUEST. A memory that is gone (expired, erased) fails its alias;
 * then that batch is asked for one by one and the missing ones are left out.
 */
export async function memoriesById(namespace: string, ids: string[], asOf: string | null = null): Promise<Map<string, Memory>> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += ALIASES_PER_REQUEST) batches.push(ids.slice(i, i + ALIASES_PER_REQUEST));
  const found = await Promise.all(batches.map((batch) => memoryBatch(namespace, batch, asOf)));
  return new Map(found.flatMap((batch) => [...batch]));
}

async function memoryBatch(namespace: string, ids: string[], asOf: string | null): Promise<Map<string, Memory>> {
  const found = new Map<string, Memory>();
  if (ids.length === 0) return found;
  const variables: Record<string, unknown> = { ns: namespace, asOf };
  const params = ids.map((id, i) => {
    variables[`id${i}`] = id;
    return `$id${i}: ID!`;
  });
  const fields = ids.map((_, i) => `m${i}: memory(namespace: $ns, id: $id${i}, asOf: $asOf) { ${MEMORY_FIELDS} }`);
  try {
    const data = await graphql<Record<string, Memory>>(
      `query Many($ns: String!, $asOf: DateTime, ${params.join(", ")}) { ${fields.join("\n")} }`,
      variables,
    );
    for (const memory of Object.values(data)) found.set(memory.id, memory);
    return found;
  } catch (exc) {
    if (!(exc instanceof ApiError) || exc.code !== "NOT_FOUND") throw exc;
  }
  const single = await Promise.all(ids.map((id) => memoryAt(namespace, id, asOf).catch(() => null)));
  for (const memory of single) if (memory) found.set(memory.id, memory);
  return found;
}

/** One memory, as it was at `asOf` (null: now); NOT_FOUND when it was not believed then. */
export async function memoryAt(namespace: string, id: string, asOf: string | null): Promise<Memory> {
  const data = await graphql<{ memory: Memory }>(
    `query One($ns: String!, $id: ID!, $asOf: DateTime) { memory(namespace: $ns, id: $id, asOf: $asOf) { ${MEMORY_FIELDS} } }`,
    { ns: namespace, id, asOf },
  );
  return data.memory;
}

async function chainStep(namespace: string, id: string): Promise<{ memory: Memory; edges: Edge[] }> {
  return graphql<{ memory: Memory; edges: Edge[] }>(
    `query ChainStep($ns: String!, $id: ID!) {
      memory(namespace: $ns, id: $id) { ${MEMORY_FIELDS} }
      edges(namespace: $ns, id: $id, types: [SUPERSEDES]) { ${EDGE_FIELDS} }
    }`,
    { ns: namespace, id },
  );
}

/**
 * The supersede chain through a memory, oldest first: older versions are
 * reached over outgoing SUPERSEDES edges, newer ones over incoming ones.
 */
export async function supersedeChain(namespace: string, start: Memory, startEdges: Edge[]): Promise<Memory[]> {
  const older: Memory[] = [];
  const newer: Memory[] = [];
  const seen = new Set<string>([start.id]);
  const step = (edges: Edge[], id: string, direction: "older" | "newer"): string | null => {
    const edge = edges.find((e) =>
      e.type === "SUPERSEDES" && (direction === "older" ? e.sourceId === id : e.targetId === id));
    if (!edge) return null;
    const next = direction === "older" ? edge.targetId : edge.sourceId;
    return seen.has(next) ? null : next;
  };
  for (const direction of ["older", "newer"] as const) {
    let id: string | null = step(startEdges, start.id, direction);
    let guard = 0;
    while (id && guard++ < 50) {
      seen.add(id);
      const version = await chainStep(namespace, id).catch(() => null);
      if (!version) break;
      (direction === "older" ? older : newer).push(version.memory);
      id = step(version.edges, id, direction);
    }
  }
  return [...older.reverse(), start, ...newer];
}

/**
 * The update links of several memories (either side), as aliases of
 * `memoryUpdates`, ALIASES_PER_REQUEST per request; each link once.
 */
export async function updatesOfMany(
  namespace: string, ids: string[], statuses: UpdateStatus[] = ["CANDIDATE", "CONFIRMED"],
): Promise<MemoryUpdate[]> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += ALIASES_PER_REQUEST) batches.push(ids.slice(i, i + ALIASES_PER_REQUEST));
  const found = await Promise.all(batches.map(async (batch) => {
    const variables: Record<string, unknown> = { ns: namespace, statuses };
    const params = batch.map((id, i) => {
      variables[`id${i}`] = id;
      return `$id${i}: ID!`;
    });
    const fields = batch.map((_, i) =>
      `u${i}: memoryUpdates(namespace: $ns, statuses: $statuses, memoryId: $id${i}) { ${UPDATE_FIELDS} }`);
    const data = await graphql<Record<string, MemoryUpdate[]>>(
      `query ManyUpdates($ns: String!, $statuses: [UpdateStatus!], ${params.join(", ")}) { ${fields.join("\n")} }`,
      variables);
    return Object.values(data).flat();
  }));
  const unique = new Map(found.flat().map((link) => [link.id, link]));
  return [...unique.values()];
}

/** Confirms an update candidate: the newer memory SUPERSEDES the older one. */
export async function confirmUpdate(namespace: string, id: string): Promise<MemoryUpdate> {
  const data = await graphql<{ confirmUpdate: MemoryUpdate }>(
    `mutation Confirm($ns: String!, $id: ID!) { confirmUpdate(namespace: $ns, id: $id) { ${UPDATE_FIELDS} } }`,
    { ns: namespace, id },
  );
  return data.confirmUpdate;
}

/** Rejects an update candidate (never proposed again for that pair), with an optional note. */
export async function rejectUpdate(namespace: string, id: string, note: string | null): Promise<MemoryUpdate> {
  const data = await graphql<{ rejectUpdate: MemoryUpdate }>(
    `mutation Reject($ns: String!, $id: ID!, $note: String) {
      rejectUpdate(namespace: $ns, id: $id, note: $note) { ${UPDATE_FIELDS} }
    }`,
    { ns: namespace, id, note },
  );
  return data.rejectUpdate;
}

/**
 * An earlier memory a memory may replace (`Memory.mayReplace`): one of its
 * nearest (by meaning and by its words), how alike the two are, and the link already between them.
 */
export interface ReplacementCandidate {
  memory: Pick<Memory, "id" | "content" | "createdAt" | "status">;
  /** Cosine similarity of the two memories' vectors, in [-1, 1]. */
  similarity: number;
  update: Pick<MemoryUpdate, "id" | "status" | "kind"> | null;
}

/** How many earlier memories the memory panel offers. */
export const MAY_REPLACE_SHOWN = 3;

/** The earlier memories a memory may replace, most alike first (empty for the first memory). */
export async function mayReplace(namespace: string, id: string, first = MAY_REPLACE_SHOWN): Promise<ReplacementCandidate[]> {
  const data = await graphql<{ memory: { mayReplace: ReplacementCandidate[] } }>(
    `query MayReplace($ns: String!, $id: ID!, $first: Int!) {
      memory(namespace: $ns, id: $id) {
        mayReplace(first: $first) { similarity memory { id content createdAt status } update { id status kind } }
      }
    }`,
    { ns: namespace, id, first },
  );
  return data.memory.mayReplace;
}

/**
 * Says that `newerId` replaces `olderId` (`proposeUpdate`, not confirmed): the
 * pair becomes an update candidate, for confirmUpdate or rejectUpdate.
 */
export async function proposeUpdate(
  namespace: string, newerId: string, olderId: string, attribute: string, reason: string | null,
): Promise<MemoryUpdate> {
  const data = await graphql<{ proposeUpdate: MemoryUpdate }>(
    `mutation Propose($ns: String!, $newer: ID!, $older: ID!, $attribute: String!, $reason: String) {
      proposeUpdate(namespace: $ns, newerId: $newer, olderId: $older, confirm: false,
                    attribute: $attribute, reason: $reason) { ${UPDATE_FIELDS} }
    }`,
    { ns: namespace, newer: newerId, older: olderId, attribute, reason },
  );
  return data.proposeUpdate;
}
