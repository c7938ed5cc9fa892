import { when } from "./format";

interface Props {
  /** The moments the namespace changed, oldest first. */
  moments: string[];
  /** The moment shown; null is now. */
  asOf: string | null;
  onChange: (asOf: string | null) => void;
}

/**
 * Time travel: each stop is a moment something was written, superseded or
 * forgotten; the last stop is now. Lists, searches and the graph show what was
 * believed at the chosen moment (the API's `asOf`).
 */
export function TimeSlider({ moments, asOf, onChange }: Props) {
  const stops = moments.length;
  const index = asOf === null ? stops : Math.max(0, moments.indexOf(asOf));
  return (
    <div className="timebar" data-testid="timebar">
      <span className="timebar-label">Time</span>
      <input
        type="range"
        min={0}
        max={stops}
        step={1}
        value={index}
        disabled={stops === 0}
        onChange={(e) => {
          const at = Number(e.target.value);
          onChange(at >= stops ? null : moments[at]);
        }}
        aria-label="Show the namespace as of"
        data-testid="time-slider"
      />
      <span className={`timebar-value${asOf ? " past" : ""}`} data-testid="as-of" data-as-of={asOf ?? ""}>
        {asOf ? `as of ${when(asOf)}` : "now"}
      </span>
      {asOf && <button type="button" className="ghost" onClick={() => onChange(null)} data-testid="time-now">Now</button>}
      <span className="muted" data-testid="time-stop">
        {stops === 0 ? "browse a namespace to travel in time"
          : asOf ? `change ${index + 1} of ${stops}` : `${stops} ${stops === 1 ? "change" : "changes"}`}
      </span>
    </div>
  );
}
