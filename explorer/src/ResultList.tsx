import type { SearchHit } from "./api";
import { num } from "./format";

interface Part {
  key: string;
  label: string;
  value: (hit: SearchHit) => number | null;
  /** How a value becomes a bar: absolute parts are already in [0, 1]. */
  scale: "absolute" | "relative";
  title: string;
}

const PARTS: Part[] = [
  { key: "similarity", label: "similarity", value: (h) => h.similarityScore, scale: "absolute", title: "cosine similarity, in [0, 1]" },
  { key: "fts", label: "fulltext", value: (h) => h.ftsScore, scale: "relative", title: "BM25, relative to the best hit" },
  { key: "recency", label: "recency", value: (h) => h.recencyScore, scale: "absolute", title: "0.5 ** (age / half-life)" },
  { key: "popularity", label: "popularity", value: (h) => h.popularityScore, scale: "absolute", title: "from access counts, in [0, 1]" },
  { key: "graph", label: "graph", value: (h) => h.graphScore, scale: "relative", title: "support from graph neighbours, relative to the best hit" },
  { key: "boost", label: "boost", value: (h) => h.boost - 1, scale: "relative", title: "key/tag match factor above 1, relative to the best hit" },
];

interface Props {
  hits: SearchHit[];
  selectedId: string | null;
  onOpen: (hit: SearchHit) => void;
}

export function ResultList({ hits, selectedId, onOpen }: Props) {
  const maxima = new Map<string, number>(
    PARTS.map((part) => [part.key, Math.max(0, ...hits.map((h) => part.value(h) ?? 0))]),
  );
  const topScore = Math.max(0, ...hits.map((h) => h.score));
  return (
    <ol className="results" data-testid="results">
      {hits.map((hit, index) => (
        <li key={hit.memory.id}>
          <button
            type="button"
            className={`result${hit.memory.id === selectedId ? " selected" : ""}${hit.outdatedBy ? " outdated" : ""}`}
            onClick={() => onOpen(hit)}
            data-testid="result"
            data-memory-id={hit.memory.id}
            data-outdated-by={hit.outdatedBy?.id ?? ""}
          >
            <div className="result-head">
              <span className="rank">{index + 1}</span>
              <span className="result-content">{hit.memory.content}</span>
              <span className="score" title="final score">{num(hit.score, 4)}</span>
            </div>
            <div className="chips">
              <span className="chip type">{hit.memory.memoryType}</span>
              {hit.memory.tags.map((tag) => <span key={tag} className="chip">#{tag}</span>)}
              {hit.expanded && <span className="chip graph" title={hit.path.map((p) => p.type).join(" → ")}>via graph</span>}
              {hit.outdatedBy && (
                <span className="chip outdated" data-testid="outdated"
                  title={`a newer memory states another value (${hit.update?.status.toLowerCase() ?? "update"}`
                    + `${hit.update ? `, ${num(hit.update.confidence)}` : ""}): ${hit.outdatedBy.content}`}>
                  {hit.update?.status === "CANDIDATE" ? "may be outdated by" : "outdated by"}: {hit.outdatedBy.content}
                </span>
              )}
              {hit.conflicts.length > 0 && (
                <span className="chip conflict" title={hit.conflicts.map((c) => c.content).join("\n")}>
                  contradicts {hit.conflicts.length}
                </span>
              )}
            </div>
            <div className="bars">
              <Bar label="score" value={hit.score} width={topScore > 0 ? hit.score / topScore : 0} title="final score, relative to the best hit" kind="final" />
              {PARTS.map((part) => {
                const value = part.value(hit);
                const max = maxima.get(part.key) ?? 0;
                const width = value === null ? 0 : part.scale === "absolute" ? value : max > 0 ? value / max : 0;
                const shown = part.key === "boost" ? hit.boost : value;
                return <Bar key={part.key} label={part.label} value={shown} width={width} title={part.title} kind={part.key} />;
              })}
            </div>
          </button>
        </li>
      ))}
    </ol>
  );
}

function Bar({ label, value, width, title, kind }: { label: string; value: number | null; width: number; title: string; kind: string }) {
  const pct = Math.round(Math.max(0, Math.min(1, width)) * 100);
  return (
    <div className="bar" title={title} data-part={kind} data-value={value ?? ""}>
      <span className="bar-label">{label}</span>
      <span className="bar-track"><span className={`bar-fill ${kind}`} style={{ width: `${pct}%` }} /></span>
      <span className="bar-value">{num(value)}</span>
    </div>
  );
}
