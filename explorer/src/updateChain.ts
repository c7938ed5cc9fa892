// The chain of states of one attribute: the memories joined by UPDATES links
// (found on write or stated by a writer), walked both ways from the memory opened, oldest first.
import { UPDATE_STATUSES, updatesOfMany } from "./api";
import type { Memory, MemoryUpdate } from "./api";

/**
 * How a state stands now: the newest statement, one a newer memory outdates, one
 * only a disputed candidate outdates (search ignores that link), or history.
 */
export type StateStanding = "current" | "outdated" | "disputed" | "superseded" | "forgotten";

export interface ChainState {
  memory: Memory;
  standing: StateStanding;
  /** The links from this memory to the older states it updates. */
  updates: MemoryUpdate[];
}

export interface UpdateChain {
  /** Oldest first; empty when the memory updates nothing and nothing updates it. */
  states: ChainState[];
  /** Rejected links of the opened memory: not part of the chain, listed apart. */
  rejected: MemoryUpdate[];
}

/** How far the walk goes: memories in a chain, and rounds of requests. */
const MAX_STATES = 30;
const MAX_ROUNDS = 10;

const at = (memory: Memory): number => Date.parse(memory.createdAt);

/**
 * Whether search ignores the link: a candidate the update judge's model disputed
 * (a confirmed link is heeded whoever disputed it before).
 */
export const isDisputed = (link: Pick<MemoryUpdate, "status" | "disputedBy">): boolean =>
  link.status === "CANDIDATE" && link.disputedBy !== null;

function standing(memory: Memory, links: MemoryUpdate[]): StateStanding {
  if (memory.status === "SUPERSEDED") return "superseded";
  if (memory.status === "FORGOTTEN") return "forgotten";
  const outdating = links.filter((link) => link.status !== "REJECTED" && link.older?.id === memory.id);
  if (outdating.some((link) => !isDisputed(link))) return "outdated";
  return outdating.length > 0 ? "disputed" : "current";
}

/**
 * Orders what the walk found: every memory reached over CANDIDATE or
 * CONFIRMED links, oldest first, each with the links to the states it updates.
 * Pure, so the page and its tests read chains the same way.
 */
export function orderChain(startId: string, links: MemoryUpdate[]): UpdateChain {
  const live = links.filter((link) => link.status !== "REJECTED" && link.newer && link.older);
  const memories = new Map<string, Memory>();
  for (const link of live) {
    memories.set(link.newer!.id, link.newer!);
    memories.set(link.older!.id, link.older!);
  }
  const states = [...memories.values()]
    .sort((a, b) => at(a) - at(b) || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
    .map((memory) => ({
      memory,
      standing: standing(memory, live),
      updates: live.filter((link) => link.newer!.id === memory.id),
    }));
  const rejected = links.filter((link) =>
    link.status === "REJECTED" && (link.newer?.id === startId || link.older?.id === startId));
  return { states, rejected };
}

/**
 * Walks the UPDATES links from `startId` both ways (older states and newer
 * ones), a round of `memoryUpdates` requests per step, bounded by MAX_STATES
 * memories and MAX_ROUNDS rounds. Rejected links are kept but not followed.
 */
export async function updateChain(namespace: string, startId: string): Promise<UpdateChain> {
  const links = new Map<string, MemoryUpdate>();
  const seen = new Set<string>([startId]);
  let frontier = [startId];
  for (let round = 0; round < MAX_ROUNDS && frontier.length > 0; round++) {
    const found = await updatesOfMany(namespace, frontier, UPDATE_STATUSES);
    const next: string[] = [];
    for (const link of found) {
      links.set(link.id, link);
      if (link.status === "REJECTED") continue;
      for (const end of [link.newer, link.older]) {
        if (end && !seen.has(end.id) && seen.size < MAX_STATES) {
          seen.add(end.id);
          next.push(end.id);
        }
      }
    }
    frontier = next;
  }
  return orderChain(startId, [...links.values()]);
}
