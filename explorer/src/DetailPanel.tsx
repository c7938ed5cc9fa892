import type { AuditEntry, Edge, Memory } from "./api";
import { json, num, shortId, when } from "./format";

export interface DetailState {
  memory: Memory;
  edges: Edge[];
  audit: AuditEntry[];
  chain: Memory[];
  /** The other end of each relationship, where known. */
  others: Map<string, Memory>;
}

interface Props {
  detail: DetailState | null;
  loading: boolean;
  onOpen: (id: string) => void;
}

const FIELDS: [keyof Memory, string][] = [
  ["id", "id"], ["namespace", "namespace"], ["key", "key"], ["memoryType", "type"], ["status", "status"],
  ["version", "version"], ["confidence", "confidence"], ["salience", "salience"], ["scope", "scope"],
  ["agentId", "agent"], ["userId", "user"], ["sessionId", "session"], ["taskId", "task"],
  ["source", "source"], ["sourceType", "source type"], ["extractionMethod", "extraction"],
  ["createdAt", "created"], ["updatedAt", "updated"], ["expiresAt", "expires"],
  ["accessCount", "accesses"], ["lastAccessedAt", "last access"], ["embeddingModel", "embedding model"],
  ["embeddingDimension", "dimension"], ["supersededBy", "superseded by"], ["supersededAt", "superseded at"],
  ["forgottenAt", "forgotten at"],
];

const TIME_FIELDS = new Set<keyof Memory>(["createdAt", "updatedAt", "expiresAt", "lastAccessedAt", "supersededAt", "forgottenAt"]);

function fieldValue(memory: Memory, field: keyof Memory): string {
  const value = memory[field];
  if (value === null || value === undefined || value === "") return "–";
  if (TIME_FIELDS.has(field)) return when(value as string);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : num(value);
  return String(value);
}

export function DetailPanel({ detail, loading, onOpen }: Props) {
  if (!detail) {
    return (
      <section className="panel detail-panel">
        <header className="panel-head"><h2>Memory</h2></header>
        <p className="muted pad">{loading ? "Loading…" : "Open a search result or a node of the graph."}</p>
      </section>
    );
  }
  const { memory, edges, audit, chain, others } = detail;
  const conflicts = edges.filter((e) => e.type === "CONTRADICTS");
  const relations = edges.filter((e) => e.type !== "SUPERSEDES" && e.type !== "CONTRADICTS");
  const otherEnd = (edge: Edge) => (edge.sourceId === memory.id ? edge.targetId : edge.sourceId);
  const describe = (id: string) => others.get(id)?.content ?? shortId(id);
  return (
    <section className="panel detail-panel" data-testid="detail" data-memory-id={memory.id}>
      <header className="panel-head">
        <h2>Memory</h2>
        <span className={`status ${memory.status.toLowerCase()}`} data-testid="detail-status">{memory.status}</span>
        <span className="muted">v{memory.version}</span>
        {loading && <span className="muted">loading…</span>}
      </header>
      <div className="detail-body">
        <p className="detail-content" data-testid="detail-content">{memory.content}</p>
        {memory.summary && <p className="muted">{memory.summary}</p>}
        <div className="chips">
          <span className="chip type">{memory.memoryType}</span>
          {memory.tags.map((tag) => <span key={tag} className="chip">#{tag}</span>)}
        </div>

        {chain.length > 1 && (
          <section>
            <h3>Supersede chain <span className="muted">oldest → newest</span></h3>
            <ol className="chain" data-testid="chain">
              {chain.map((version) => (
                <li key={version.id} className={version.id === memory.id ? "current" : ""}>
                  <button type="button" className="link" onClick={() => onOpen(version.id)}
                    data-testid="chain-item" data-memory-id={version.id} data-status={version.status}>
                    <span className={`status ${version.status.toLowerCase()}`}>{version.status}</span>
                    <span className="chain-text">{version.content}</span>
                    <span className="muted">{when(version.createdAt)}</span>
                  </button>
                </li>
              ))}
            </ol>
          </section>
        )}

        {conflicts.length > 0 && (
          <section>
            <h3>Contradictions</h3>
            <ul className="relations" data-testid="conflicts">
              {conflicts.map((edge) => (
                <li key={edge.id} className="conflict">
                  <span className="edge-type CONTRADICTS">{edge.sourceId === memory.id ? "contradicts" : "contradicted by"}</span>
                  <button type="button" className="link" onClick={() => onOpen(otherEnd(edge))}>{describe(otherEnd(edge))}</button>
                </li>
              ))}
            </ul>
          </section>
        )}

        {relations.length > 0 && (
          <section>
            <h3>Relationships</h3>
            <ul className="relations">
              {relations.map((edge) => (
                <li key={edge.id}>
                  <span className={`edge-type ${edge.type}`}>{edge.sourceId === memory.id ? edge.type : `← ${edge.type}`}</span>
                  <button type="button" className="link" onClick={() => onOpen(otherEnd(edge))}>{describe(otherEnd(edge))}</button>
                </li>
              ))}
            </ul>
          </section>
        )}

        <section>
          <h3>Audit history</h3>
          <table className="audit" data-testid="audit">
            <colgroup><col className="when" /><col className="operation" /><col className="actor" /><col className="version" /></colgroup>
            <thead><tr><th>when</th><th>operation</th><th>actor</th><th>version</th></tr></thead>
            <tbody>
              {audit.map((entry) => (
                <tr key={entry.id} data-operation={entry.operation} title={json(entry.details)}>
                  <td>{when(entry.at)}</td>
                  <td><span className="op">{entry.operation}</span></td>
                  <td>{entry.actor}</td>
                  <td>{entry.version ?? "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>

        <section>
          <h3>Fields</h3>
          <dl className="fields">
            {FIELDS.map(([field, name]) => (
              <div key={field}><dt>{name}</dt><dd>{fieldValue(memory, field)}</dd></div>
            ))}
          </dl>
          {(["value", "metadata", "provenance"] as const).map((field) =>
            memory[field] !== null && !(typeof memory[field] === "object" && Object.keys(memory[field] as object).length === 0) ? (
              <div key={field}>
                <h4>{field}</h4>
                <pre className="json">{json(memory[field])}</pre>
              </div>
            ) : null,
          )}
        </section>
      </div>
    </section>
  );
}
