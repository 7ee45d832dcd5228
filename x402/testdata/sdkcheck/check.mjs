// Reads sdkcheck's JSON on stdin and checks every narrowed challenge with the official @x402/core:
// the header decoder accepts it, the PaymentRequired schema validates it, and the seller's own
// findMatchingRequirements matches the echoed `accepted` (a verbatim copy of the entry) to the original
// entry. Exit status 1 on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const core = path.join(root, 'interop/node_modules/@x402/core/dist/esm');
const http = await import(path.join(core, 'http/index.mjs'));
const schemas = await import(path.join(core, 'schemas/index.mjs'));
const server = await import(path.join(core, 'server/index.mjs'));

const d = JSON.parse(fs.readFileSync(0, 'utf8'));
const full = JSON.parse(d.full);
const seller = new server.x402ResourceServer();
let failures = 0;
d.narrowed.forEach((header, i) => {
  const pr = http.decodePaymentRequiredHeader(header);
  const parsed = schemas.parsePaymentRequired(pr);
  const schemaOK = parsed && parsed.success !== false;
  const accepted = structuredClone(pr.accepts[0]);
  const matched = seller.findMatchingRequirements([full.accepts[i]], { x402Version: 2, accepted, payload: {} }) === full.accepts[i];
  const sameEntry = JSON.stringify(sortKeys(pr.accepts[0])) === JSON.stringify(sortKeys(full.accepts[i]));
  const kept = ['resource', 'extensions', 'topLevelExtra', 'error'].every((k) => JSON.stringify(sortKeys(pr[k])) === JSON.stringify(sortKeys(full[k])));
  console.log(`option ${i}: one entry ${pr.accepts.length === 1}, schema ${schemaOK}, same entry ${sameEntry}, seller matches accepted ${matched}, other members kept ${kept}`);
  if (pr.accepts.length !== 1 || !schemaOK || !matched || !sameEntry || !kept) failures++;
});
const v1 = JSON.parse(d.v1narrowed);
const v1orig = JSON.parse(d.v1orig);
const v1OK = schemas.parsePaymentRequired(v1).success !== false && JSON.stringify(v1) === JSON.stringify(v1orig);
console.log(`v1 body: schema and identical to the original ${v1OK}`);
if (!v1OK) failures++;
process.exit(failures ? 1 : 0);

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}
