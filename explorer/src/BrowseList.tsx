import type { Memory } from "./api";
import { when } from "./format";

interface Props {
  memories: Memory[];
  selectedId: string | null;
  onOpen: (memory: Memory) => void;
}

/** A browsed page: newest first, each memory with its type, status, tags and age. */
export function BrowseList({ memories, selectedId, onOpen }: Props) {
  return (
    <ol className="results" data-testid="browse-list">
      {memories.map((memory) => (
        <li key={memory.id}>
          <button
            type="button"
            className={`result${memory.id === selectedId ? " selected" : ""}`}
            onClick={() => onOpen(memory)}
            data-testid="browse-item"
            data-memory-id={memory.id}
            data-status={memory.status}
          >
            <div className="result-head">
              <span className="result-content">{memory.content}</span>
              <span className={`status ${memory.status.toLowerCase()}`}>{memory.status}</span>
            </div>
            <div className="chips">
              <span className="chip type">{memory.memoryType}</span>
              {memory.tags.map((tag) => <span key={tag} className="chip">#{tag}</span>)}
              <span className="muted browse-when">{when(memory.createdAt)}</span>
            </div>
          </button>
        </li>
      ))}
    </ol>
  );
}
