export const num = (value: number | null | undefined, digits = 3): string =>
  value === null || value === undefined ? "–" : value.toFixed(digits);

export const when = (iso: string | null | undefined): string => {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
};

export const shortId = (id: string): string => (id.length > 12 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);

export const json = (value: unknown): string =>
  value === null || value === undefined ? "–" : JSON.stringify(value, null, 2);
