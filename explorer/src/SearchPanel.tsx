import type { FormEvent } from "react";
import type { SearchForm } from "./api";

const PRESETS = ["", "default", "precise", "keyword", "recent", "conversation", "diverse"];

interface Props {
  form: SearchForm;
  busy: boolean;
  onChange: (form: SearchForm) => void;
  onSearch: () => void;
}

export function SearchPanel({ form, busy, onChange, onSearch }: Props) {
  const set = <K extends keyof SearchForm>(key: K, value: SearchForm[K]) => onChange({ ...form, [key]: value });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch();
  };
  return (
    <form className="search" onSubmit={submit} data-testid="search-form">
      <div className="search-row">
        <input
          className="search-query"
          type="search"
          placeholder="Search memories…"
          value={form.query}
          onChange={(e) => set("query", e.target.value)}
          aria-label="Query"
          data-testid="query"
          autoFocus
        />
        <button type="submit" className="primary" disabled={busy || !form.namespace.trim() || !form.query.trim()}
          title={form.namespace.trim() ? undefined : "Set a namespace first"} data-testid="search">
          {busy ? "Searching…" : "Search"}
        </button>
      </div>
      <div className="search-grid">
        <label>
          Mode
          <select value={form.mode} onChange={(e) => set("mode", e.target.value as SearchForm["mode"])} data-testid="mode">
            <option value="">default</option>
            <option value="HYBRID">hybrid</option>
            <option value="SEMANTIC">semantic</option>
            <option value="LEXICAL">lexical</option>
          </select>
        </label>
        <label>
          Scoring
          <select value={form.scoring} onChange={(e) => set("scoring", e.target.value as SearchForm["scoring"])}>
            <option value="">default</option>
            <option value="RRF">RRF</option>
            <option value="HYBRID">weighted</option>
            <option value="SIMILARITY">similarity</option>
          </select>
        </label>
        <label>
          Preset
          <select value={form.preset} onChange={(e) => set("preset", e.target.value)}>
            {PRESETS.map((p) => <option key={p} value={p}>{p || "none"}</option>)}
          </select>
        </label>
        <label>
          Limit
          <input type="number" min={1} max={100} value={form.limit}
            onChange={(e) => set("limit", Math.max(1, Math.min(100, Number(e.target.value) || 10)))} />
        </label>
      </div>
      <details className="filters">
        <summary>Filters &amp; scope</summary>
        <div className="search-grid">
          <label className="wide">
            Tags (comma separated)
            <input value={form.tags} onChange={(e) => set("tags", e.target.value)} placeholder="travel, family" data-testid="tags" />
          </label>
          <label>
            Tag match
            <select value={form.tagsMatch} onChange={(e) => set("tagsMatch", e.target.value as "any" | "all")}>
              <option value="any">any</option>
              <option value="all">all</option>
            </select>
          </label>
          <label className="wide">
            Memory types
            <input value={form.memoryTypes} onChange={(e) => set("memoryTypes", e.target.value)} placeholder="note, fact" />
          </label>
          <label>
            Scope
            <select value={form.scope} onChange={(e) => set("scope", e.target.value as SearchForm["scope"])}>
              <option value="">whole namespace</option>
              <option value="TASK">task and broader</option>
              <option value="SESSION">session and broader</option>
              <option value="USER">user and broader</option>
              <option value="AGENT">agent</option>
            </select>
          </label>
          {(["agentId", "userId", "sessionId", "taskId"] as const).map((field) => (
            <label key={field}>
              {field}
              <input value={form[field]} onChange={(e) => set(field, e.target.value)} />
            </label>
          ))}
        </div>
      </details>
      <label className="check">
        <input type="checkbox" checked={form.expand} onChange={(e) => set("expand", e.target.checked)} data-testid="expand" />
        Graph expansion (neighbours of the hits may join)
      </label>
    </form>
  );
}
