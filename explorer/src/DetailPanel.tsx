import { useState } from "react";
import type { AuditEntry, Edge, Memory, MemoryUpdate, ReplacementCandidate } from "./api";
import { json, num, shortId, when } from "./format";
import { isDisputed } from "./updateChain";
import type { UpdateChain } from "./updateChain";

export interface DetailState {
  memory: Memory;
  edges: Edge[];
  audit: AuditEntry[];
  chain: Memory[];
  /** The other end of each relationship, where known. */
  others: Map<string, Memory>;
  /** The chain of states of this memory's attribute (UPDATES links). */
  updates: UpdateChain;
  /** Earlier memories an ACTIVE memory may replace (`mayReplace`); empty otherwise. */
  replaceable: ReplacementCandidate[];
}

/** A decision on an update candidate, and the error it met (a stable code). */
export type Decision = { action: "confirm" } | { action: "reject"; note: string | null };

export interface DecisionProblem {
  linkId: string;
  code: string;
  message: string;
}

/** What the writer says with Replaces: what changed and why, both optional. */
export interface Proposal {
  attribute: string;
  reason: string | null;
}

/** A refused proposal (newer replaces older), with its stable code. */
export interface ProposalProblem {
  newerId: string;
  olderId: string;
  code: string;
  message: string;
}

interface Props {
  detail: DetailState | null;
  loading: boolean;
  onOpen: (id: string) => void;
  onDecide: (link: MemoryUpdate, decision: Decision) => void;
  /** The link a decision is being sent for (buttons wait meanwhile). */
  deciding: string | null;
  decisionProblem: DecisionProblem | null;
  onPropose: (candidate: ReplacementCandidate, proposal: Proposal) => void;
  /** The earlier memory a proposal is being sent for (its Replaces waits meanwhile). */
  proposing: string | null;
  proposalProblem: ProposalProblem | null;
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

export function DetailPanel({
  detail, loading, onOpen, onDecide, deciding, decisionProblem, onPropose, proposing, proposalProblem,
}: Props) {
  if (!detail) {
    return (
      <section className="panel detail-panel">
        <header className="panel-head"><h2>Memory</h2></header>
        <p className="muted pad">{loading ? "Loading…" : "Open a search result or a node of the graph."}</p>
      </section>
    );
  }
  const { memory, edges, audit, chain, others, updates, replaceable } = detail;
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

        {(updates.states.length > 0 || updates.rejected.length > 0) && (
          <UpdateChainSection memory={memory} chain={updates} onOpen={onOpen} onDecide={onDecide}
            deciding={deciding} problem={decisionProblem} />
        )}

        {memory.status === "ACTIVE" && replaceable.length > 0 && (
          <MayReplaceSection candidates={replaceable} onOpen={onOpen} onPropose={onPropose} proposing={proposing}
            problem={proposalProblem?.newerId === memory.id ? proposalProblem : null} />
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

const STANDING_TITLES: Record<string, string> = {
  current: "the newest statement of this attribute",
  outdated: "a newer memory states another value (a candidate not yet decided)",
  disputed: "a newer memory may state another value, but the update judge disputed the link: search treats this memory as current until the link is confirmed",
  superseded: "replaced: kept as history",
  forgotten: "forgotten",
};

interface ChainProps {
  memory: Memory;
  chain: UpdateChain;
  onOpen: (id: string) => void;
  onDecide: (link: MemoryUpdate, decision: Decision) => void;
  deciding: string | null;
  problem: DecisionProblem | null;
}

/** The states of an attribute, oldest first, each with the links to what it updates. */
function UpdateChainSection({ memory, chain, onOpen, onDecide, deciding, problem }: ChainProps) {
  const previous = new Map(chain.states.map((state, i) => [state.memory.id, chain.states[i - 1]?.memory.id]));
  return (
    <section data-testid="updates">
      <h3>States of this attribute <span className="muted">oldest → newest</span></h3>
      {chain.states.length > 0 && (
        <ol className="chain states" data-testid="update-chain">
          {chain.states.map((state) => (
            <li key={state.memory.id} className={state.memory.id === memory.id ? "current" : ""}
              data-testid="update-state" data-memory-id={state.memory.id} data-standing={state.standing}>
              {state.updates.map((link) => (
                <UpdateLink key={link.id} link={link} adjacent={previous.get(state.memory.id) === link.older?.id}
                  onDecide={onDecide} deciding={deciding === link.id}
                  problem={problem?.linkId === link.id ? problem : null} />
              ))}
              <button type="button" className="link" onClick={() => onOpen(state.memory.id)}>
                <span className="state-head">
                  <span className={`standing ${state.standing}`} title={STANDING_TITLES[state.standing]}
                    data-testid="state-standing">{state.standing}</span>
                  <span className="muted">{when(state.memory.createdAt)}</span>
                </span>
                <span className="chain-text" data-testid="state-content">{state.memory.content}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
      {chain.rejected.length > 0 && (
        <>
          <h4>Rejected links</h4>
          <ul className="relations" data-testid="rejected-updates">
            {chain.rejected.map((link) => {
              const other = link.newer?.id === memory.id ? link.older : link.newer;
              return (
                <li key={link.id} data-testid="rejected-update" data-update-id={link.id}>
                  <span className="update-status rejected">REJECTED</span>
                  <button type="button" className="link" onClick={() => other && onOpen(other.id)}>
                    {other?.content ?? "–"}
                  </button>
                  {link.note && <span className="muted">“{link.note}”</span>}
                  <span className="muted update-origin" data-testid="rejected-origin"
                    data-proposed-by={link.proposedBy ?? ""}>
                    {link.proposedBy === null ? "found by the rules" : `stated by ${link.proposedBy}`}
                  </span>
                </li>
              );
            })}
          </ul>
        </>
      )}
    </section>
  );
}

interface LinkProps {
  link: MemoryUpdate;
  /** Whether the older end is the state listed just above (else it is named). */
  adjacent: boolean;
  onDecide: (link: MemoryUpdate, decision: Decision) => void;
  deciding: boolean;
  problem: DecisionProblem | null;
}

/**
 * One UPDATES link: why, how sure, who found or stated it, whether the update
 * judge disputed it, where it stands, and the decision on a candidate.
 */
function UpdateLink({ link, adjacent, onDecide, deciding, problem }: LinkProps) {
  const [note, setNote] = useState("");
  const disputed = isDisputed(link);
  return (
    <div className={`update-link${disputed ? " disputed" : ""}`} data-testid="update-link" data-update-id={link.id}
      data-status={link.status} data-disputed={disputed ? "true" : "false"}>
      <div className="update-head">
        <span className="edge-type UPDATES">{link.kind === "CONTRADICTION" ? "↑ contradicts" : "↑ updates"}</span>
        {!adjacent && <span className="muted">{link.older?.content ?? "–"}</span>}
        <span className={`update-status ${link.status.toLowerCase()}`} data-testid="update-status">{link.status}</span>
        <span className="muted" data-testid="update-confidence" title="how surely subject and attribute matched">
          {num(link.confidence)}
        </span>
        <span className="muted update-origin" data-testid="update-origin" data-proposed-by={link.proposedBy ?? ""}
          title={link.proposedBy === null
            ? "the server's rule set found it when the newer memory was written"
            : "a writer said the newer memory replaces the older (proposeUpdate, or a write the update judge's model judged)"}>
          {link.proposedBy === null ? "found by the rules" : `stated by ${link.proposedBy}`}
        </span>
      </div>
      <p className="update-reason" data-testid="update-reason" title={link.matched.join(" · ")}>{link.reason}</p>
      {disputed && (
        <p className="update-disputed" data-testid="update-disputed" data-disputed-by={link.disputedBy ?? ""}
          title="the update judge's model was shown this pair and did not say the newer memory replaces the older: search neither marks the older memory outdated nor reorders by this link; Confirm or Reject decide it, a writer stating the pair ends the dispute">
          <strong>disputed by {link.disputedBy}</strong>: search ignores it until confirmed
        </p>
      )}
      {!disputed && link.disputedBy && (
        <p className="muted update-decided" data-testid="update-was-disputed">
          disputed by {link.disputedBy} before it was {link.status.toLowerCase()}
        </p>
      )}
      {link.status !== "CANDIDATE" && link.decidedAt && (
        <p className="muted update-decided">
          {link.status.toLowerCase()} {when(link.decidedAt)}{link.decidedBy ? ` by ${link.decidedBy}` : ""}
          {link.note ? ` — “${link.note}”` : ""}
        </p>
      )}
      {link.status === "CANDIDATE" && (
        <div className="update-actions">
          <button type="button" className="primary small" disabled={deciding}
            onClick={() => onDecide(link, { action: "confirm" })} data-testid="update-confirm"
            title="the newer memory supersedes the older one (kept as history)">Confirm</button>
          <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="note (optional)"
            aria-label="Note on rejecting" data-testid="update-note" disabled={deciding} />
          <button type="button" className="ghost small" disabled={deciding}
            onClick={() => onDecide(link, { action: "reject", note: note.trim() || null })} data-testid="update-reject"
            title="not an update: never proposed again for this pair">Reject</button>
        </div>
      )}
      {problem && (
        <p className="update-error" role="alert" data-testid="update-error" data-code={problem.code}>
          <strong>{problem.code}</strong> {problem.message}
        </p>
      )}
    </div>
  );
}

interface MayReplaceProps {
  candidates: ReplacementCandidate[];
  onOpen: (id: string) => void;
  onPropose: (candidate: ReplacementCandidate, proposal: Proposal) => void;
  proposing: string | null;
  problem: ProposalProblem | null;
}

/**
 * The earlier memories nearest this one by meaning (`mayReplace`), most alike
 * first: the writer says which one it replaces, as the rules could not read it.
 */
function MayReplaceSection({ candidates, onOpen, onPropose, proposing, problem }: MayReplaceProps) {
  return (
    <section data-testid="may-replace">
      <h3>Earlier memories it may replace <span className="muted">most alike first</span></h3>
      <ol className="chain states may-replace">
        {candidates.map((candidate) => (
          <ReplacementRow key={candidate.memory.id} candidate={candidate} onOpen={onOpen} onPropose={onPropose}
            proposing={proposing === candidate.memory.id}
            problem={problem?.olderId === candidate.memory.id ? problem : null} />
        ))}
      </ol>
    </section>
  );
}

interface RowProps {
  candidate: ReplacementCandidate;
  onOpen: (id: string) => void;
  onPropose: (candidate: ReplacementCandidate, proposal: Proposal) => void;
  proposing: boolean;
  problem: ProposalProblem | null;
}

/** One earlier memory: what it says, when, how alike; Replaces when no link joins the two yet. */
function ReplacementRow({ candidate, onOpen, onPropose, proposing, problem }: RowProps) {
  const [attribute, setAttribute] = useState("");
  const [reason, setReason] = useState("");
  const { memory, similarity, update } = candidate;
  return (
    <li data-testid="may-replace-item" data-memory-id={memory.id} data-update-status={update?.status ?? ""}>
      <button type="button" className="link" onClick={() => onOpen(memory.id)}>
        <span className="state-head">
          <span className="similarity" data-testid="may-replace-similarity"
            title="cosine similarity of the two memories' meaning, in [-1, 1]">{num(similarity, 2)}</span>
          <span className="muted">{when(memory.createdAt)}</span>
          {update && (
            <span className={`update-status ${update.status.toLowerCase()}`} data-testid="may-replace-link"
              title="the update link already between the two: decide it under States of this attribute">
              {update.kind === "CONTRADICTION" ? "contradicts" : "updates"} {update.status}
            </span>
          )}
        </span>
        <span className="chain-text" data-testid="may-replace-content">{memory.content}</span>
      </button>
      {!update && (
        <div className="update-actions">
          <button type="button" className="primary small" disabled={proposing} data-testid="may-replace-propose"
            onClick={() => onPropose(candidate, { attribute: attribute.trim(), reason: reason.trim() || null })}
            title="this memory replaces that one: an update candidate, to confirm or reject">Replaces</button>
          <input value={attribute} onChange={(e) => setAttribute(e.target.value)} placeholder="what changed"
            title="optional: what changed, in a word or two (residence, port, drink)"
            aria-label="What changed (optional)" maxLength={128} data-testid="may-replace-attribute" disabled={proposing} />
          <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="why"
            title="optional: why, in words; kept in the link's reason"
            aria-label="Why it replaces that memory (optional)" maxLength={2000} data-testid="may-replace-reason" disabled={proposing} />
        </div>
      )}
      {problem && (
        <p className="update-error" role="alert" data-testid="may-replace-error" data-code={problem.code}>
          <strong>{problem.code}</strong> {problem.message}
        </p>
      )}
    </li>
  );
}
