import { useCallback, useRef, useState } from "react";
import { ApiError, loadApiKey, memoriesById, memoryDetail, saveApiKey, search, supersedeChain } from "./api";
import type { Memory, SearchForm, SearchHit } from "./api";
import { DetailPanel } from "./DetailPanel";
import type { DetailState } from "./DetailPanel";
import { GraphView } from "./GraphView";
import { ResultList } from "./ResultList";
import { SearchPanel } from "./SearchPanel";

const NAMESPACE_STORAGE = "memlattice.explorer.namespace";

const initialForm = (): SearchForm => ({
  namespace: new URLSearchParams(location.search).get("namespace") ?? localStorage.getItem(NAMESPACE_STORAGE) ?? "",
  query: "",
  mode: "",
  scoring: "",
  preset: "",
  tags: "",
  tagsMatch: "any",
  memoryTypes: "",
  scope: "",
  agentId: "",
  userId: "",
  sessionId: "",
  taskId: "",
  expand: false,
  limit: 10,
});

interface Problem {
  code: string;
  message: string;
}

const problem = (error: unknown): Problem =>
  error instanceof ApiError ? { code: error.code, message: error.message } : { code: "ERROR", message: String(error) };

export function App() {
  const [form, setForm] = useState<SearchForm>(initialForm);
  const [apiKey, setApiKey] = useState(loadApiKey);
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Problem | null>(null);
  const [graphFocus, setGraphFocus] = useState<Memory | null>(null);
  const [detail, setDetail] = useState<DetailState | null>(null);
  const [detailLoading, setDetailLoading] = useState(false);
  const latest = useRef(0);
  // The namespace of the results on screen: editing the field does not re-aim
  // the open detail and graph until the next search.
  const [namespace, setNamespace] = useState(form.namespace.trim());

  const fail = useCallback((e: unknown) => setError(problem(e)), []);

  const runSearch = async () => {
    setBusy(true);
    setError(null);
    const searched = form.namespace.trim();
    if (searched !== namespace) {
      setDetail(null);
      setGraphFocus(null);
    }
    setNamespace(searched);
    localStorage.setItem(NAMESPACE_STORAGE, searched);
    try {
      setHits(await search(form));
    } catch (e) {
      setHits(null);
      fail(e);
    } finally {
      setBusy(false);
    }
  };

  /** Loads a memory's detail; `refocus` also re-centres the graph on it. */
  const open = useCallback(async (id: string, refocus: boolean) => {
    const request = ++latest.current;
    setDetailLoading(true);
    try {
      const base = await memoryDetail(namespace, id);
      const otherIds = [...new Set(base.edges.flatMap((e) => [e.sourceId, e.targetId]))].filter((o) => o !== id);
      const [chain, others] = await Promise.all([
        supersedeChain(namespace, base.memory, base.edges),
        memoriesById(namespace, otherIds),
      ]);
      if (request !== latest.current) return;
      setDetail({ ...base, chain, others });
      if (refocus) setGraphFocus(base.memory);
    } catch (e) {
      if (request === latest.current) fail(e);
    } finally {
      if (request === latest.current) setDetailLoading(false);
    }
  }, [namespace, fail]);

  const openHit = (hit: SearchHit) => {
    setGraphFocus(hit.memory);
    void open(hit.memory.id, false);
  };

  const changeKey = (key: string) => {
    setApiKey(key);
    saveApiKey(key.trim());
  };

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <img src={`${import.meta.env.BASE_URL}favicon.svg`} alt="" width={24} height={24} />
          <span>Memlattice</span><span className="brand-sub">Explorer</span>
        </div>
        <label className="top-field">
          Namespace
          <input value={form.namespace} onChange={(e) => setForm({ ...form, namespace: e.target.value })}
            placeholder="team/alice" data-testid="namespace" spellCheck={false} />
        </label>
        <label className="top-field">
          API key
          <input type="password" value={apiKey} onChange={(e) => changeKey(e.target.value)}
            placeholder="none (dev mode)" autoComplete="off" data-testid="api-key" />
        </label>
        <a className="top-link" href="/graphql">GraphQL ↗</a>
      </header>
      {error && (
        <div className="error" role="alert" data-testid="error">
          <strong>{error.code}</strong> {error.message}
          <button type="button" className="ghost" onClick={() => setError(null)} aria-label="Dismiss">×</button>
        </div>
      )}
      <main className="columns">
        <section className="panel search-panel">
          <SearchPanel form={form} busy={busy} onChange={setForm} onSearch={runSearch} />
          <div className="results-scroll">
            {hits === null && <p className="muted pad">Pick a namespace, type a query and press Search.</p>}
            {hits !== null && (
              <p className="muted results-count" data-testid="results-count">
                {hits.length} {hits.length === 1 ? "result" : "results"}
              </p>
            )}
            {hits !== null && <ResultList hits={hits} selectedId={detail?.memory.id ?? null} onOpen={openHit} />}
          </div>
        </section>
        <GraphView namespace={namespace} focus={graphFocus} onSelect={(id) => void open(id, false)} onError={fail} />
        <DetailPanel detail={detail} loading={detailLoading} onOpen={(id) => void open(id, true)} />
      </main>
    </div>
  );
}
