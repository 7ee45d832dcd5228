// The measurement behind docs/SPEC.md §12.6 (docs/benchmarks/clients.md): the JavaScript guard's native
// decision code against the Go engine compiled to WebAssembly, on every decision vector. Both must first
// decide every vector as the Go engine exported it; then it reports, per implementation, the time per
// decision (all vectors, many rounds, after a warm-up) and the cold start (a fresh Node process: load, then
// the first decision), the median of several processes. Usage (from the repository root):
//
//   GOOS=js GOARCH=wasm go build -trimpath -ldflags=-s -o /tmp/engine.wasm ./scripts/bench-clients
//   node scripts/bench-clients/bench.mjs /tmp/engine.wasm          (needs clients/js/node_modules: npm ci)
//
// With --cold native|wasm it is the child process of the cold-start measurement.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';

const t0 = performance.now();
const root = new URL('../../', import.meta.url);
const [,, wasmPath, flag, which] = process.argv.length > 3 && process.argv[2] === '--cold'
  ? [null, null, process.argv[4], '--cold', process.argv[3]] : process.argv;
const vectors = JSON.parse(readFileSync(new URL('testdata/vectors/decisions.json', root))).vectors;

async function loadNative() {
  const { decideChallenge } = await import(new URL('clients/js/src/decide.js', root));
  const { camelRuleName, normalizeRules } = await import(new URL('clients/js/src/rules.js', root));
  const { parseUSD } = await import(new URL('clients/js/src/usd.js', root));
  const SANCTIONS = { unavailable: { state: 'unavailable' }, failed: { state: 'failed' }, clear: { state: 'screened' }, listed: { state: 'screened', addressMatch: true } };
  return (v) => {
    const input = v.input, s = v.screening;
    const given = s.domain_age_days !== undefined || s.domain_has_a !== undefined || s.domain_failed;
    const domain = !given ? {} : s.domain_failed ? { failed: true } : { ageDays: s.domain_age_days, hasA: s.domain_has_a };
    const got = decideChallenge({
      paymentRequired: input.challenge, accepts: input.challenge.accepts,
      rules: normalizeRules(Object.fromEntries(Object.entries(input.rules ?? {}).map(([k, val]) => [camelRuleName(k), val]))),
      spentToday: input.context ? parseUSD(input.context.spent_today_usd) : 0n, resourceUrl: input.resource_url,
      screen: () => ({ sanctions: SANCTIONS[s.sanctions], domain }),
    });
    return { decision: got.decision, reasons: got.reasons, chosen: got.chosen, amount_micros: Number(got.amountMicros) };
  };
}

async function loadWasm(path) {
  // The parent resolves GOROOT once, so that the child's cold start does not time a `go env` process.
  const goroot = process.env.BENCH_GOROOT ?? execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
  await import(`${goroot}/lib/wasm/wasm_exec.js`); // defines globalThis.Go
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(path), go.importObject);
  go.run(instance); // runs main until it blocks in select{}, having registered payguardDecide
  return (v) => {
    const out = globalThis.payguardDecide(JSON.stringify({ input: v.input, screening: v.screening }));
    if (typeof out !== 'string') throw new Error(out.error);
    return JSON.parse(out);
  };
}

const load = (kind) => (kind === 'native' ? loadNative() : loadWasm(wasmPath));

if (flag === '--cold') {
  const decide = await load(which);
  decide(vectors[0]);
  console.log(JSON.stringify({ coldMs: performance.now() - t0 }));
  process.exit(0);
}

const expectOf = (v) => ({ decision: v.expect.decision, reasons: v.expect.reasons, chosen: v.expect.chosen, amount_micros: v.expect.amount_micros });
const report = {};
const goroot = execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim();
for (const kind of ['native', 'wasm']) {
  const decide = await load(kind);
  const wrong = vectors.filter((v) => !isDeepStrictEqual(decide(v), expectOf(v))).map((v) => v.name);
  if (wrong.length) throw new Error(`${kind} decides ${wrong.length} vectors differently: ${wrong.slice(0, 5).join('; ')}`);
  for (let i = 0; i < 20; i++) for (const v of vectors) decide(v); // warm-up
  const rounds = 200;
  const start = performance.now();
  for (let i = 0; i < rounds; i++) for (const v of vectors) decide(v);
  const perDecisionUs = ((performance.now() - start) * 1000) / (rounds * vectors.length);
  const colds = [];
  for (let i = 0; i < 7; i++) {
    const out = execFileSync(process.execPath, [new URL(import.meta.url).pathname, '--cold', kind, wasmPath ?? ''], { encoding: 'utf8', env: { ...process.env, BENCH_GOROOT: goroot } });
    colds.push(JSON.parse(out).coldMs);
  }
  colds.sort((a, b) => a - b);
  report[kind] = { vectors: vectors.length, agree: true, perDecisionUs: +perDecisionUs.toFixed(1), coldStartMsMedian: +colds[3].toFixed(1) };
}
console.log(JSON.stringify(report, null, 1));
