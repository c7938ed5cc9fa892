// graphql-http's own GraphQL-over-HTTP audits (serverAudits) against a live server.
//
//   node tests/node/audit_server.mjs http://127.0.0.1:8000/graphql [api-key] [--json]
//
// Prints each audit's outcome and the counts per requirement (MUST, SHOULD,
// MAY); with --json, one JSON object instead. Exits 1 when a MUST or a SHOULD
// fails. The key, when given, is sent as `Authorization: Bearer <key>` with
// every audit's request (the audits themselves send none).
import { auditServer } from "graphql-http";

const args = process.argv.slice(2);
const json = args.includes("--json");
const [url, key] = args.filter((arg) => arg !== "--json");
if (!url) {
  console.error("usage: node audit_server.mjs <graphql url> [api key] [--json]");
  process.exit(2);
}

const fetchFn = (input, init = {}) => {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};

const results = await auditServer({ url, fetchFn });
const counts = {};
const audits = [];
for (const result of results) {
  const requirement = result.name.split(" ")[0];
  const tally = (counts[requirement] ??= { passed: 0, failed: 0 });
  const passed = result.status === "ok";
  tally[passed ? "passed" : "failed"] += 1;
  audits.push({ id: result.id, name: result.name, passed,
                reason: passed ? undefined : result.reason });
}
if (json) {
  console.log(JSON.stringify({ counts, audits }));
} else {
  for (const audit of audits) {
    console.log(`${audit.passed ? "pass" : "FAIL"}  ${audit.id}  ${audit.name}` +
                (audit.passed ? "" : `\n        ${audit.reason}`));
  }
  for (const [requirement, { passed, failed }] of Object.entries(counts)) {
    console.log(`${requirement}: ${passed}/${passed + failed} pass`);
  }
}
const blocking = ["MUST", "SHOULD"].some((requirement) => counts[requirement]?.failed);
process.exit(blocking ? 1 : 0);
