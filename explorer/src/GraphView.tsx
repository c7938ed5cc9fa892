import { useEffect, useRef, useState } from "react";
import { EDGE_TYPES } from "./api";
import type { Memory } from "./api";
import { NeighbourhoodGraph } from "./graphModel";

declare global {
  interface Window {
    /** The live graph, for the end-to-end tests and for poking at in devtools. */
    memlatticeExplorer?: { graph: NeighbourhoodGraph };
  }
}

interface Props {
  namespace: string;
  focus: Memory | null;
  onSelect: (id: string) => void;
  onError: (error: unknown) => void;
}

export function GraphView({ namespace, focus, onSelect, onError }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const graph = useRef<NeighbourhoodGraph | null>(null);
  const [counts, setCounts] = useState({ nodes: 0, edges: 0 });
  const [busy, setBusy] = useState(false);
  const handlers = useRef({ onSelect, onError });
  handlers.current = { onSelect, onError };

  useEffect(() => {
    const instance = new NeighbourhoodGraph(container.current!, () =>
      setCounts({ nodes: instance.cy.nodes().length, edges: instance.cy.edges().length }));
    graph.current = instance;
    window.memlatticeExplorer = { graph: instance };
    instance.cy.on("tap", "node", (event) => {
      const id: string = event.target.id();
      handlers.current.onSelect(id);
      if (!instance.isExpanded(id)) {
        setBusy(true);
        instance.expand(id).catch((e) => handlers.current.onError(e)).finally(() => setBusy(false));
      }
    });
    return () => {
      instance.destroy();
      graph.current = null;
      delete window.memlatticeExplorer;
    };
  }, []);

  useEffect(() => {
    const instance = graph.current;
    if (!instance) return;
    if (!focus) {
      instance.clear();
      return;
    }
    if (instance.memory(focus.id)) {
      instance.select(focus.id);
      return;
    }
    setBusy(true);
    instance.focus(namespace, focus)
      .then(() => instance.select(focus.id))
      .catch((e) => handlers.current.onError(e))
      .finally(() => setBusy(false));
  }, [namespace, focus]);

  return (
    <section className="panel graph-panel">
      <header className="panel-head">
        <h2>Neighbourhood</h2>
        <span className="muted" data-testid="graph-counts">
          {counts.nodes} memories · {counts.edges} relationships{busy ? " · loading…" : ""}
        </span>
        <button type="button" className="ghost" onClick={() => graph.current?.fit()} disabled={!counts.nodes}>Fit</button>
      </header>
      <div
        className="graph"
        ref={container}
        data-testid="graph"
        data-nodes={counts.nodes}
        data-edges={counts.edges}
        data-busy={busy ? "true" : "false"}
      />
      {!focus && <p className="graph-empty">Open a result to see its neighbourhood. Click a memory in the graph to expand it.</p>}
      <ul className="legend" aria-label="Legend">
        {EDGE_TYPES.map((type) => (
          <li key={type}><span className="swatch line" data-colour={type} />{type}</li>
        ))}
        <li><span className="swatch node superseded" />superseded</li>
        <li><span className="swatch node contradicted" />in a contradiction</li>
        <li><span className="swatch node unexpanded" />click to expand</li>
      </ul>
    </section>
  );
}
