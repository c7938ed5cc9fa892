import { useEffect, useRef, useState } from "react";
import type { Memory } from "./api";
import { GRAPH_EDGE_TYPES, NeighbourhoodGraph } from "./graphModel";

declare global {
  interface Window {
    /** The live graph, for the end-to-end tests and for poking at in devtools. */
    memlatticeExplorer?: { graph: NeighbourhoodGraph };
  }
}

/** What the graph shows: a browsed page of memories, or one memory's neighbourhood. */
export type Scene = { kind: "set"; memories: Memory[] } | { kind: "focus"; memory: Memory; redraw?: boolean };

interface Props {
  namespace: string;
  /** The moment shown (null: now). */
  asOf: string | null;
  scene: Scene | null;
  selectedId: string | null;
  onSelect: (id: string) => void;
  onError: (error: unknown) => void;
}

export function GraphView({ namespace, asOf, scene, selectedId, onSelect, onError }: Props) {
  const container = useRef<HTMLDivElement>(null);
  const graph = useRef<NeighbourhoodGraph | null>(null);
  const [counts, setCounts] = useState({ nodes: 0, edges: 0 });
  const [busy, setBusy] = useState(false);
  const shownKind = useRef<Scene["kind"] | null>(null);
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
    if (!scene) {
      instance.clear();
      return;
    }
    // Within a neighbourhood, a memory already drawn is only selected; a browsed
    // page gives way to the neighbourhood of the memory opened from a search.
    const within = shownKind.current === "focus";
    shownKind.current = scene.kind;
    if (scene.kind === "focus" && within && !scene.redraw && instance.memory(scene.memory.id)) {
      instance.select(scene.memory.id);
      return;
    }
    setBusy(true);
    const shown = scene.kind === "set"
      ? instance.showSet(namespace, scene.memories, asOf)
      : instance.focus(namespace, scene.memory, asOf).then(() => instance.select(scene.memory.id));
    shown.catch((e) => handlers.current.onError(e)).finally(() => setBusy(false));
    // asOf is read when a scene is built; a new moment comes with a new scene.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [namespace, scene]);

  useEffect(() => {
    if (selectedId && graph.current?.memory(selectedId)) graph.current.select(selectedId);
  }, [selectedId, counts]);

  return (
    <section className="panel graph-panel">
      <header className="panel-head">
        <h2>{scene?.kind === "set" ? "Graph" : "Neighbourhood"}</h2>
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
      {!scene && <p className="graph-empty">Browse a namespace or open a search result. Click a memory in the graph to expand it.</p>}
      <ul className="legend" aria-label="Legend">
        {GRAPH_EDGE_TYPES.map((type) => (
          <li key={type}><span className="swatch line" data-colour={type} />{type}</li>
        ))}
        <li><span className="swatch node superseded" />superseded</li>
        <li><span className="swatch node contradicted" />in a contradiction</li>
        <li><span className="swatch node unexpanded" />click to expand</li>
      </ul>
    </section>
  );
}
