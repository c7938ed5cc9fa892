import type { FormEvent } from "react";
import { STATUSES } from "./api";
import type { SearchForm, Status } from "./api";

const PRESETS = ["", "default", "precise", "keyword", "recent", "conversation", "diverse"];

/** Browse lists a namespace newest first without a query; search ranks by a query. */
export type View = "browse" | "search";

interface Props {
  form: SearchForm;
  view: View;
  busy: boolean;
  onView: (view: View) => void;
  onChange: (form: SearchForm) => void;
  onSearch: () => void;
  onBrowse: () => void;
}

export function SearchPanel({ form, view, busy, onView, onChange, onSearch, onBrowse }: Props) {
  const set = <K extends keyof SearchForm>(key: K, value: SearchForm[K]) => onChange({ ...form, [key]: value });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (view === "search") onSearch();
    else onBrowse();
  };
  const toggleStatus = (status: Status, on: boolean) =>
    set("statuses", STATUSES.filter((s) => (s === status ? on : form.statuses.includes(s))));
  const noNamespace = !form.namespace.trim();
  return (
    <form className="search" onSubmit={submit} data-testid="search-form">
      <div className="tabs" role="tablist">
        {(["browse", "search"] as const).map((name) => (
          <button key={name} type="button" role="tab" aria-selected={view === name}
            className={`tab${view === name ? " active" : ""}`} onClick={() => onView(name)} data-testid={`tab-${name}`}>
            {name === "browse" ? "Browse" : "Search"}
          </button>
        ))}
      </div>
      {view === "search" ? (
        <>
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
            <button type="submit" className="primary" disabled={busy || noNamespace || !form.query.trim()}
              title={noNamespace ? "Set a namespace first" : undefined} data-testid="search">
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
        </>
      ) : (
        <div className="search-row browse-row">
          <fieldset className="statuses" data-testid="statuses">
            <legend>Status</legend>
            {STATUSES.map((status) => (
              <label key={status} className="check">
                <input type="checkbox" checked={form.statuses.includes(status)}
                  onChange={(e) => toggleStatus(status, e.target.checked)} data-testid={`status-${status}`} />
                {status.toLowerCase()}
              </label>
            ))}
          </fieldset>
          <button type="submit" className="primary" disabled={busy || noNamespace || form.statuses.length === 0}
            title={noNamespace ? "Set a namespace first" : undefined} data-testid="browse">
            {busy ? "Loading…" : "Show"}
          </button>
        </div>
      )}
      <details className="filters" key={view} open={view === "browse"}>
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
            <input value={form.memoryTypes} onChange={(e) => set("memoryTypes", e.target.value)} placeholder="note, fact"
              data-testid="memory-types" />
          </label>
          <label>
            Scope
            <select value={form.scope} onChange={(e) => set("scope", e.target.value as SearchForm["scope"])} data-testid="scope">
              {view === "search" ? (
                <>
                  <option value="">whole namespace</option>
                  <option value="TASK">task and broader</option>
                  <option value="SESSION">session and broader</option>
                  <option value="USER">user and broader</option>
                  <option value="AGENT">agent</option>
                </>
              ) : (
                <>
                  <option value="">any</option>
                  <option value="TASK">task</option>
                  <option value="SESSION">session</option>
                  <option value="USER">user</option>
                  <option value="AGENT">agent</option>
                </>
              )}
            </select>
          </label>
          {(["agentId", "userId", "sessionId", "taskId"] as const).map((field) => (
            <label key={field}>
              {field}
              <input value={form[field]} onChange={(e) => set(field, e.target.value)} data-testid={field} />
            </label>
          ))}
        </div>
      </details>
      {view === "search" && (
        <label className="check">
          <input type="checkbox" checked={form.expand} onChange={(e) => set("expand", e.target.checked)} data-testid="expand" />
          Graph expansion (neighbours of the hits may join)
        </label>
      )}
    </form>
  );
}
