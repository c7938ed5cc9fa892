import { useCallback, useEffect, useRef, useState } from "react";
import {
  ApiError, browse, confirmUpdate, loadApiKey, mayReplace, rejectUpdate, memoriesById, memoryDetail, namespaces, proposeUpdate,
  saveApiKey, search, supersedeChain, timeline,
} from "./api";
import type { BrowsePage, Memory, MemoryUpdate, ReplacementCandidate, SearchForm, SearchHit } from "./api";
import { BrowseList } from "./BrowseList";
import { DetailPanel } from "./DetailPanel";
import type { Decision, DecisionProblem, DetailState, Proposal, ProposalProblem } from "./DetailPanel";
import { GraphView } from "./GraphView";
import type { Scene } from "./GraphView";
import { ResultList } from "./ResultList";
import { SearchPanel } from "./SearchPanel";
import type { View } from "./SearchPanel";
import { TimeSlider } from "./TimeSlider";
import { updateChain } from "./updateChain";

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
  statuses: ["ACTIVE"],
});

interface Problem {
  code: string;
  message: string;
}

const problem = (error: unknown): Problem =>
  error instanceof ApiError ? { code: error.code, message: error.message } : { code: "ERROR", message: String(error) };

export function App() {
  const [form, setForm] = useState<SearchForm>(initialForm);
  const [view, setView] = useState<View>("browse");
  const [apiKey, setApiKey] = useState(loadApiKey);
  const [known, setKnown] = useState<string[]>([]);
  const [hits, setHits] = useState<SearchHit[] | null>(null);
  const [page, setPage] = useState<BrowsePage | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Problem | null>(null);
  const [scene, setScene] = useState<Scene | null>(null);
  const [detail, setDetail] = useState<DetailState | null>(null);
  const [detailLoading, setDetailLoading] = useState(false);
  const [deciding, setDeciding] = useState<string | null>(null);
  const [decisionProblem, setDecisionProblem] = useState<DecisionProblem | null>(null);
  const [proposing, setProposing] = useState<string | null>(null);
  const [proposalProblem, setProposalProblem] = useState<ProposalProblem | null>(null);
  const [moments, setMoments] = useState<string[]>([]);
  const [asOf, setAsOf] = useState<string | null>(null);
  const latest = useRef(0);
  // Lists and searches answer out of order when the slider moves fast: only the newest lands.
  const listing = useRef(0);
  // The namespace of the results on screen: editing the field does not re-aim
  // the open detail and graph until the next search.
  const [namespace, setNamespace] = useState(form.namespace.trim());

  const fail = useCallback((e: unknown) => setError(problem(e)), []);

  // The picker offers the namespaces this key may read; a key being typed fails quietly.
  useEffect(() => {
    const timer = setTimeout(() => {
      namespaces().then(setKnown).catch(() => setKnown([]));
    }, 250);
    return () => clearTimeout(timer);
  }, [apiKey]);

  /** Aims the page at the namespace in the field; a new one drops the old detail, graph and moment. */
  const aim = (): { target: string; at: string | null } => {
    const target = form.namespace.trim();
    let at = asOf;
    if (target !== namespace) {
      setDetail(null);
      setScene(null);
      setMoments([]);
      setAsOf(null);
      at = null;
    }
    setNamespace(target);
    localStorage.setItem(NAMESPACE_STORAGE, target);
    return { target, at };
  };

  const runSearch = async (at: string | null = aim().at) => {
    const request = ++listing.current;
    setBusy(true);
    setError(null);
    try {
      const found = await search(form, at);
      if (request === listing.current) setHits(found);
    } catch (e) {
      if (request !== listing.current) return;
      setHits(null);
      fail(e);
    } finally {
      if (request === listing.current) setBusy(false);
    }
  };

  const runBrowse = async (at: string | null = aim().at, more = false) => {
    const request = ++listing.current;
    setBusy(true);
    setError(null);
    const target = form.namespace.trim();
    try {
      const [next, changes] = await Promise.all([
        browse(form, at, more && page ? page.endCursor : null),
        more ? Promise.resolve(null) : timeline(target),
      ]);
      if (request !== listing.current) return;
      const shown = more && page ? { ...next, memories: [...page.memories, ...next.memories] } : next;
      setPage(shown);
      setScene({ kind: "set", memories: shown.memories });
      if (changes) setMoments(changes);
    } catch (e) {
      if (request !== listing.current) return;
      setPage(null);
      fail(e);
    } finally {
      if (request === listing.current) setBusy(false);
    }
  };

  /** A new moment on the slider: what is on screen is asked for again, as of then. */
  const travel = (at: string | null) => {
    setAsOf(at);
    if (view === "browse") void runBrowse(at);
    else if (hits !== null && form.query.trim()) void runSearch(at);
  };

  /**
   * Loads a memory's detail; `refocus` also re-centres the graph on it, and
   * `redraw` draws that neighbourhood afresh (after a decision changed it).
   */
  const open = useCallback(async (id: string, refocus: boolean, redraw = false) => {
    const request = ++latest.current;
    setDetailLoading(true);
    try {
      const [base, updates] = await Promise.all([memoryDetail(namespace, id), updateChain(namespace, id)]);
      const otherIds = [...new Set(base.edges.flatMap((e) => [e.sourceId, e.targetId]))].filter((o) => o !== id);
      // Only an active memory can replace another: the others are not asked.
      const [chain, others, replaceable] = await Promise.all([
        supersedeChain(namespace, base.memory, base.edges),
        memoriesById(namespace, otherIds),
        base.memory.status === "ACTIVE" ? mayReplace(namespace, id) : Promise.resolve([]),
      ]);
      if (request !== latest.current) return;
      setDetail({ ...base, chain, others, updates, replaceable });
      setDecisionProblem((shown) => (shown && updates.states.some((s) => s.updates.some((l) => l.id === shown.linkId)) ? shown : null));
      setProposalProblem((shown) =>
        (shown && shown.newerId === id && replaceable.some((c) => c.memory.id === shown.olderId) ? shown : null));
      if (refocus) setScene({ kind: "focus", memory: base.memory, redraw });
    } catch (e) {
      if (request === latest.current) fail(e);
    } finally {
      if (request === latest.current) setDetailLoading(false);
    }
  }, [namespace, fail]);

  /** Confirms or rejects an update candidate, then reloads the detail and its neighbourhood. */
  const decide = async (link: MemoryUpdate, decision: Decision) => {
    const shown = detail?.memory.id;
    setDeciding(link.id);
    setDecisionProblem(null);
    try {
      if (decision.action === "confirm") await confirmUpdate(namespace, link.id);
      else await rejectUpdate(namespace, link.id, decision.note);
    } catch (e) {
      const { code, message } = problem(e);
      setDecisionProblem({ linkId: link.id, code, message });
      return;
    } finally {
      setDeciding(null);
    }
    if (shown) await open(shown, true, true);
    if (view === "search" && hits !== null && form.query.trim()) void runSearch(asOf);
  };

  /**
   * Says the open memory replaces an earlier one (an update candidate, decided
   * in the states chain), then reloads as a decision does.
   */
  const propose = async (candidate: ReplacementCandidate, proposal: Proposal) => {
    const newer = detail?.memory.id;
    if (!newer) return;
    const older = candidate.memory.id;
    setProposing(older);
    setProposalProblem(null);
    try {
      await proposeUpdate(namespace, newer, older, proposal.attribute, proposal.reason);
    } catch (e) {
      const { code, message } = problem(e);
      setProposalProblem({ newerId: newer, olderId: older, code, message });
      return;
    } finally {
      setProposing(null);
    }
    await open(newer, true, true);
    if (view === "search" && hits !== null && form.query.trim()) void runSearch(asOf);
  };

  const openHit = (hit: SearchHit) => {
    setScene({ kind: "focus", memory: hit.memory });
    void open(hit.memory.id, false);
  };

  const openBrowsed = (memory: Memory) => void open(memory.id, false);

  const changeKey = (key: string) => {
    setApiKey(key);
    saveApiKey(key.trim());
  };

  const selectedId = detail?.memory.id ?? null;
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
            placeholder={known.length ? "pick or type" : "team/alice"} data-testid="namespace" spellCheck={false}
            list="namespace-options" />
          <datalist id="namespace-options" data-testid="namespace-options">
            {known.map((name) => <option key={name} value={name} />)}
          </datalist>
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
      <TimeSlider moments={moments} asOf={asOf} onChange={travel} />
      <main className="columns">
        <section className="panel search-panel">
          <SearchPanel form={form} view={view} busy={busy} onView={setView} onChange={setForm}
            onSearch={() => void runSearch()} onBrowse={() => void runBrowse()} />
          <div className="results-scroll">
            {view === "search" && hits === null && <p className="muted pad">Pick a namespace, type a query and press Search.</p>}
            {view === "search" && hits !== null && (
              <>
                <p className="muted results-count" data-testid="results-count">
                  {hits.length} {hits.length === 1 ? "result" : "results"}{asOf ? " (as of then)" : ""}
                </p>
                <ResultList hits={hits} selectedId={selectedId} onOpen={openHit} />
              </>
            )}
            {view === "browse" && page === null && <p className="muted pad">Pick a namespace and press Show: its memories, newest first.</p>}
            {view === "browse" && page !== null && (
              <>
                <p className="muted results-count" data-testid="browse-count">
                  {page.memories.length} of {page.total} {page.total === 1 ? "memory" : "memories"}, newest first
                  {asOf ? " (as of then)" : ""}
                </p>
                <BrowseList memories={page.memories} selectedId={selectedId} onOpen={openBrowsed} />
                {page.hasNext && (
                  <button type="button" className="ghost more" disabled={busy} onClick={() => void runBrowse(asOf, true)}
                    data-testid="browse-more">Load more</button>
                )}
              </>
            )}
          </div>
        </section>
        <GraphView namespace={namespace} asOf={asOf} scene={scene} selectedId={selectedId}
          onSelect={(id) => void open(id, false)} onError={fail} />
        <DetailPanel detail={detail} loading={detailLoading} onOpen={(id) => void open(id, true)}
          onDecide={(link, decision) => void decide(link, decision)} deciding={deciding}
          decisionProblem={decisionProblem} onPropose={(candidate, proposal) => void propose(candidate, proposal)}
          proposing={proposing} proposalProblem={proposalProblem} />
      </main>
    </div>
  );
}
