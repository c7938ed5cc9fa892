// The neighbourhood graph: a cytoscape instance grown one expansion at a time.
// Kept apart from React so the component only mounts it and forwards clicks.
import cytoscape from "cytoscape";
import type { Core, ElementDefinition } from "cytoscape";
import { EDGE_TYPES, edgesOf, edgesOfMany, memoriesById, updatesOfMany } from "./api";
import type { Edge, EdgeType, Memory, MemoryUpdate } from "./api";
import { isDisputed } from "./updateChain";

/**
 * What the graph draws: the relationships `edges` lists, and UPDATES, the links
 * update detection makes (newer → older), which only `memoryUpdates` lists.
 */
export type GraphEdgeType = EdgeType | "UPDATES";
export const GRAPH_EDGE_TYPES: GraphEdgeType[] = [...EDGE_TYPES, "UPDATES"];

export const EDGE_COLOURS: Record<GraphEdgeType, string> = {
  RELATED: "#64748b",
  SUPPORTS: "#16a34a",
  DERIVED: "#7c3aed",
  CONTRADICTS: "#dc2626",
  SUPERSEDES: "#d97706",
  UPDATES: "#0891b2",
};

/**
 * An UPDATES link's label: a candidate is a question, and a candidate the update
 * judge's model disputed says so (search ignores it, so it must not read like one
 * that outdates its older memory).
 */
export function updateLabel(link: Pick<MemoryUpdate, "status" | "disputedBy">): string {
  if (isDisputed(link)) return "UPDATES? disputed";
  return link.status === "CANDIDATE" ? "UPDATES?" : "UPDATES";
}

/** An UPDATES link as a graph edge, labelled and styled by where it stands. */
function updateEdge(link: MemoryUpdate): GraphEdge | null {
  if (!link.newer || !link.older) return null;
  return {
    id: `update:${link.id}`, type: "UPDATES", sourceId: link.newer.id, targetId: link.older.id,
    createdAt: link.createdAt, status: link.status, disputed: isDisputed(link),
    label: updateLabel(link),
  };
}

interface GraphEdge {
  id: string;
  type: GraphEdgeType;
  sourceId: string;
  targetId: string;
  createdAt: string | null;
  status?: string;
  /** A candidate the update judge's model disputed (search ignores it). */
  disputed?: boolean;
  label: string;
}

const fromEdge = (edge: Edge): GraphEdge => ({ ...edge, label: edge.type });

const graphEdges = (edges: Edge[], links: MemoryUpdate[]): GraphEdge[] => [
  ...edges.map(fromEdge),
  ...links.map(updateEdge).filter((e): e is GraphEdge => e !== null),
];

const MAX_FIT_ZOOM = 1.3;

const label = (memory: Memory): string => {
  const text = memory.summary || memory.content;
  return text.length > 48 ? `${text.slice(0, 46)}…` : text;
};

const STYLE: cytoscape.StylesheetJson = [
  {
    selector: "node",
    style: {
      "background-color": "#3b82f6",
      "border-color": "#1e40af",
      "border-width": 2,
      label: "data(label)",
      color: "#1e293b",
      "font-size": 11,
      "font-family": "Inter, system-ui, sans-serif",
      "text-wrap": "wrap",
      "text-max-width": "140px",
      "text-valign": "bottom",
      "text-margin-y": 6,
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.85,
      "text-background-padding": "2px",
      width: 26,
      height: 26,
    },
  },
  { selector: "node[?expanded]", style: { "background-color": "#1d4ed8" } },
  { selector: "node[!expanded]", style: { "background-color": "#93c5fd" } },
  {
    selector: 'node[status = "SUPERSEDED"]',
    style: { "background-color": "#e2e8f0", "border-color": "#64748b", "border-style": "dashed", color: "#64748b" },
  },
  {
    selector: 'node[status = "FORGOTTEN"]',
    style: { "background-color": "#f1f5f9", "border-color": "#94a3b8", "border-style": "dotted", color: "#94a3b8" },
  },
  { selector: "node[?contradicted]", style: { "border-color": "#dc2626", "border-width": 4 } },
  { selector: "node[?focus]", style: { width: 36, height: 36, "font-weight": "bold" } },
  { selector: "node:selected", style: { "overlay-color": "#2563eb", "overlay-opacity": 0.18, "overlay-padding": 6 } },
  {
    selector: "edge",
    style: {
      width: 2,
      "curve-style": "bezier",
      "target-arrow-shape": "triangle",
      "arrow-scale": 0.9,
      "line-color": "data(colour)",
      "target-arrow-color": "data(colour)",
      label: "data(label)",
      "font-size": 8,
      color: "data(colour)",
      "text-rotation": "autorotate",
      "text-background-color": "#ffffff",
      "text-background-opacity": 0.9,
      "text-background-padding": "1px",
    },
  },
  { selector: 'edge[type = "SUPERSEDES"]', style: { "line-style": "dashed" } },
  { selector: 'edge[type = "UPDATES"]', style: { "line-style": "dotted", width: 3, "target-arrow-shape": "chevron" } },
  { selector: 'edge[type = "UPDATES"][status = "CANDIDATE"]', style: { "font-style": "italic" } },
  {
    // Disputed: drawn faint and in the disputed colour of the detail panel, no arrow
    // head of its own weight: search does not treat the older memory as outdated.
    selector: 'edge[type = "UPDATES"][?disputed]',
    style: { "line-color": "#c026d3", "target-arrow-color": "#c026d3", color: "#86198f",
      "line-style": "dashed", "line-dash-pattern": [2, 4], opacity: 0.7, "target-arrow-shape": "vee" },
  },
];

/**
 * Cytoscape injects an inline `<style>` for `position: relative` on its container
 * unless an element with this id exists. The page's Content-Security-Policy
 * forbids inline styles, so styles.css carries that rule and a placeholder takes
 * the id.
 */
function claimCytoscapeStylesheet(): void {
  const id = "__________cytoscape_stylesheet";
  if (document.getElementById(id)) return;
  const placeholder = document.createElement("meta");
  placeholder.id = id;
  document.head.prepend(placeholder);
}

export class NeighbourhoodGraph {
  readonly cy: Core;
  private namespace = "";
  /** The moment the graph shows (null: now): later relationships and memories stay out. */
  private asOf: string | null = null;
  private readonly memories = new Map<string, Memory>();
  /** Bumped by every new scene: a scene whose data arrives after a newer one began is dropped. */
  private generation = 0;

  constructor(container: HTMLElement, private readonly onChange: () => void) {
    claimCytoscapeStylesheet();
    this.cy = cytoscape({
      container,
      style: STYLE,
      minZoom: 0.2,
      maxZoom: 3,
      wheelSensitivity: 0.3,
    });
  }

  clear(): void {
    this.memories.clear();
    this.cy.elements().remove();
    this.onChange();
  }

  /** Starts over from one memory and its direct neighbours (as of `asOf`, if set). */
  async focus(namespace: string, memory: Memory, asOf: string | null = null): Promise<void> {
    this.namespace = namespace;
    this.asOf = asOf;
    ++this.generation;
    this.clear();
    this.addMemory(memory, { focus: true });
    await this.expand(memory.id);
  }

  /**
   * Starts over from a set of memories (a browsed page) and the relationships
   * among them that existed at `asOf` (null: now). Nothing is expanded yet.
   */
  async showSet(namespace: string, memories: Memory[], asOf: string | null): Promise<void> {
    this.namespace = namespace;
    this.asOf = asOf;
    const generation = ++this.generation;
    const ids = memories.map((m) => m.id);
    const [found, links] = await Promise.all([edgesOfMany(namespace, ids), updatesOfMany(namespace, ids)]);
    const edges = this.existing(graphEdges(found, links));
    if (generation !== this.generation) return;
    this.clear();
    this.cy.batch(() => {
      for (const memory of memories) this.addMemory(memory, {});
      for (const edge of edges) this.addEdge(edge);
    });
    this.layout();
    this.onChange();
  }

  /** Relationships that existed at the graph's moment. */
  private existing(edges: GraphEdge[]): GraphEdge[] {
    const asOf = this.asOf;
    if (!asOf) return edges;
    return edges.filter((e) => e.createdAt === null || Date.parse(e.createdAt) <= Date.parse(asOf));
  }

  /** Adds a memory's relationships and the memories at their other end. */
  async expand(id: string): Promise<void> {
    const generation = this.generation;
    const [found, links] = await Promise.all([edgesOf(this.namespace, id), updatesOfMany(this.namespace, [id])]);
    const edges = this.existing(graphEdges(found, links));
    const missing = [...new Set(edges.flatMap((e) => [e.sourceId, e.targetId]))]
      .filter((other) => !this.memories.has(other));
    const fetched = await memoriesById(this.namespace, missing, this.asOf);
    if (generation !== this.generation) return;
    this.cy.batch(() => {
      for (const memory of fetched.values()) this.addMemory(memory, {});
      for (const edge of edges) this.addEdge(edge);
      this.cy.getElementById(id).data("expanded", true);
    });
    this.layout();
    this.onChange();
  }

  isExpanded(id: string): boolean {
    return Boolean(this.cy.getElementById(id).data("expanded"));
  }

  memory(id: string): Memory | undefined {
    return this.memories.get(id);
  }

  select(id: string): void {
    this.cy.elements().unselect();
    this.cy.getElementById(id).select();
  }

  fit(): void {
    this.cy.fit(undefined, 40);
    if (this.cy.zoom() > MAX_FIT_ZOOM) {
      this.cy.zoom(MAX_FIT_ZOOM);
      this.cy.center();
    }
  }

  destroy(): void {
    this.cy.destroy();
  }

  private addMemory(memory: Memory, extra: { focus?: boolean }): void {
    this.memories.set(memory.id, memory);
    const existing = this.cy.getElementById(memory.id);
    const data = { id: memory.id, label: label(memory), status: memory.status, ...extra };
    if (existing.nonempty()) existing.data(data);
    else this.cy.add({ group: "nodes", data: { ...data, expanded: false, contradicted: false } });
  }

  private addEdge(edge: GraphEdge): void {
    const source = this.cy.getElementById(edge.sourceId);
    const target = this.cy.getElementById(edge.targetId);
    if (source.empty() || target.empty()) return;
    const existing = this.cy.getElementById(edge.id);
    if (existing.nonempty()) {
      // A link decided or disputed since it was drawn: its label and style follow.
      existing.data({ label: edge.label, disputed: edge.disputed === true,
        ...(edge.status ? { status: edge.status } : {}) });
      return;
    }
    const definition: ElementDefinition = {
      group: "edges",
      data: {
        id: edge.id, source: edge.sourceId, target: edge.targetId, type: edge.type, label: edge.label,
        colour: EDGE_COLOURS[edge.type], ...(edge.status ? { status: edge.status } : {}),
        disputed: edge.disputed === true,
      },
    };
    this.cy.add(definition);
    if (edge.type === "CONTRADICTS") {
      source.data("contradicted", true);
      target.data("contradicted", true);
    }
  }

  private layout(): void {
    const layout = this.cy.layout({
      name: "cose",
      animate: false,
      randomize: false,
      fit: true,
      padding: 40,
      nodeRepulsion: () => 9000,
      idealEdgeLength: () => 110,
      nodeDimensionsIncludeLabels: true,
    } as cytoscape.LayoutOptions);
    // Fitting two or three nodes would blow them up; keep text at a readable size.
    layout.one("layoutstop", () => {
      if (this.cy.zoom() > MAX_FIT_ZOOM) {
        this.cy.zoom(MAX_FIT_ZOOM);
        this.cy.center();
      }
    });
    layout.run();
  }
}
