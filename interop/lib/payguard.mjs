// Helpers to run the real payguard binary in the interop tests: build it once per test process from the repo
// root, start `payguard proxy|serve --config <yaml>` with a YAML string the test writes, wait for its ports,
// talk to its approval API, and stop it.
//
// PAYGUARD_BIN names a prebuilt binary and skips the build (CI can build once for all test files).

import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const execFileP = promisify(execFile);

/** REPO_ROOT is the Go module root, the parent of interop/. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let built;

/**
 * buildPayguard runs `go build -o <tmp>/payguard ./cmd/payguard` once per process and resolves to the binary's
 * path. A build failure rejects with the compiler's output: the tests that need the binary then fail.
 */
export function buildPayguard() {
  if (process.env.PAYGUARD_BIN) return Promise.resolve(process.env.PAYGUARD_BIN);
  built ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payguard-bin-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, 'payguard');
    try {
      await execFileP('go', ['build', '-o', out, './cmd/payguard'], { cwd: REPO_ROOT, maxBuffer: 16 << 20 });
    } catch (err) {
      throw new Error(`go build ./cmd/payguard failed:\n${err.stderr || err.message}`);
    }
    return out;
  })();
  return built;
}

/** freePort asks the kernel for a free loopback port (closed again at once; fine for tests on one machine). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port, host) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    sock.once('connect', () => { sock.destroy(); resolve(true); });
    sock.once('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * startPayguard writes yaml to <dir>/payguard.yaml and spawns `payguard <mode> --config <file>` in dir, then
 * waits until every address in waitFor ("host:port") accepts connections. It rejects, with the process's
 * output, if the process exits first or the ports do not open within startTimeoutMs.
 * Resolves to {proc, dir, configFile, output(), stop()}.
 */
export async function startPayguard({ mode = 'proxy', yaml, dir, waitFor = [], env = {}, args = [], startTimeoutMs = 30000 }) {
  const bin = await buildPayguard();
  dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'payguard-run-'));
  fs.mkdirSync(dir, { recursive: true });
  const configFile = path.join(dir, 'payguard.yaml');
  fs.writeFileSync(configFile, yaml);
  const proc = spawn(bin, [mode, '--config', configFile, ...args], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk) => {
    out += chunk.toString();
    if (out.length > 200_000) out = out.slice(-100_000); // the tail is what explains a failure
  };
  proc.stdout.on('data', keep);
  proc.stderr.on('data', keep);
  let exited = null;
  const exitPromise = new Promise((resolve) => proc.once('exit', (code, signal) => { exited = { code, signal }; resolve(exited); }));

  const deadline = Date.now() + startTimeoutMs;
  for (const addr of waitFor) {
    const i = addr.lastIndexOf(':');
    const host = addr.slice(0, i);
    const port = Number(addr.slice(i + 1));
    for (;;) {
      if (exited) throw new Error(`payguard ${mode} exited (${JSON.stringify(exited)}) before ${addr} opened:\n${out}`);
      if (await canConnect(port, host)) break;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`payguard ${mode}: ${addr} did not open within ${startTimeoutMs} ms:\n${out}`);
      }
      await sleep(50);
    }
  }

  return {
    proc,
    dir,
    configFile,
    output: () => out,
    exited: () => exited,
    /** stop sends SIGTERM, then SIGKILL after 10 s, and resolves once the process is gone. */
    async stop() {
      if (exited) return exited;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
      const r = await exitPromise;
      clearTimeout(timer);
      return r;
    },
  };
}

/**
 * adminClient talks to payguard's approval API with a bearer token:
 * holds(status), hold(id), approve(id, body), deny(id, body), budget(), raw(method, path, body, token).
 */
export function adminClient(baseUrl, token) {
  async function call(method, p, body, tok = token) {
    const res = await fetch(baseUrl + p, {
      method,
      headers: { ...(tok ? { authorization: `Bearer ${tok}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, json, text };
  }
  return {
    raw: call,
    holds: (status) => call('GET', `/v1/holds${status ? `?status=${encodeURIComponent(status)}` : ''}`),
    hold: (id) => call('GET', `/v1/holds/${encodeURIComponent(id)}`),
    approve: (id, body = { by: 'interop-test', note: 'approved by the interop test' }) => call('POST', `/v1/holds/${encodeURIComponent(id)}/approve`, body),
    deny: (id, body = { by: 'interop-test', note: 'denied by the interop test' }) => call('POST', `/v1/holds/${encodeURIComponent(id)}/deny`, body),
    budget: () => call('GET', '/v1/budget'),
  };
}

/**
 * proxyYAML renders a `payguard proxy` configuration. rules is an object of SPEC's snake_case rules (written
 * as YAML flow, i.e. JSON); the store is a bolt file in dataDir unless storeYAML (a whole `store:` section)
 * says otherwise; extra is appended verbatim (further sections a test needs); adminYAML is appended to the
 * admin section (lines indented by two spaces, e.g. its notify: subsection).
 */
export function proxyYAML({ proxyAddr, adminAddr, dataDir, upstreamCAFiles = [], rules = {}, holdWait = '0s', holdTTL = '15m', budget = 'default', storeYAML, extra = '', adminYAML = '' }) {
  const q = (s) => JSON.stringify(s);
  return [
    'proxy:',
    `  listen: ${q(proxyAddr)}`,
    `  data_dir: ${q(dataDir)}`,
    `  ca_cert_file: ${q(path.join(dataDir, 'ca', 'payguard-ca.pem'))}`,
    `  ca_key_file: ${q(path.join(dataDir, 'ca', 'payguard-ca-key.pem'))}`,
    `  upstream_ca_files: ${q(upstreamCAFiles)}`,
    `  hold_wait: ${q(holdWait)}`,
    `  hold_ttl: ${q(holdTTL)}`,
    `  budget: ${q(budget)}`,
    'admin:',
    `  listen: ${q(adminAddr)}`,
    adminYAML,
    storeYAML ?? ['store:', '  driver: bolt', `  path: ${q(path.join(dataDir, 'payguard.db'))}`].join('\n'),
    'keys:',
    `  receipt_key_file: ${q(path.join(dataDir, 'receipt-keys.json'))}`,
    `rules: ${JSON.stringify(rules)}`,
    extra,
    '',
  ].join('\n');
}

/**
 * startProxy runs `payguard proxy` with its state in dir (reuse dir to restart with the same state), the
 * admin token from PAYGUARD_ADMIN_TOKEN, and fresh loopback ports. The MITM CA is made beforehand with
 * `payguard ca init` when dir has none. args default to --offline: tests make no network lookups for domain
 * facts (loopback only). Resolves to {proxyUrl, adminUrl, caPem, caFile, dir, yaml, stop(), output()}.
 */
export async function startProxy({ dir, token, upstreamCAFiles, rules, holdWait, holdTTL, budget, storeYAML, extra, adminYAML, env = {}, args = ['--offline'] }) {
  const bin = await buildPayguard();
  fs.mkdirSync(dir, { recursive: true });
  const caFile = path.join(dir, 'ca', 'payguard-ca.pem');
  if (!fs.existsSync(caFile)) {
    try {
      await execFileP(bin, ['ca', 'init', '--out', path.join(dir, 'ca')]);
    } catch (err) {
      throw new Error(`payguard ca init failed: ${err.stderr || err.message}`);
    }
  }
  const [pp, ap] = await Promise.all([freePort(), freePort()]);
  const proxyAddr = `127.0.0.1:${pp}`;
  const adminAddr = `127.0.0.1:${ap}`;
  const yaml = proxyYAML({ proxyAddr, adminAddr, dataDir: dir, upstreamCAFiles, rules, holdWait, holdTTL, budget, storeYAML, extra, adminYAML });
  const run = await startPayguard({ mode: 'proxy', yaml, dir, args, waitFor: [proxyAddr, adminAddr], env: { PAYGUARD_ADMIN_TOKEN: token, ...env } });
  return {
    proxyUrl: `http://${proxyAddr}`,
    adminUrl: `http://${adminAddr}`,
    caFile,
    caPem: fs.readFileSync(caFile, 'utf8'),
    dir,
    yaml,
    stop: run.stop,
    output: run.output,
  };
}

/**
 * serveYAML renders a `payguard serve` configuration: the API on listenAddr, fees paid to payTo on network
 * through the facilitator at facilitatorUrl, a memory store unless storeYAML says otherwise.
 */
export function serveYAML({ listenAddr, dataDir, payTo, facilitatorUrl, network = 'eip155:8453', rules = {}, storeYAML, extra = '' }) {
  const q = (s) => JSON.stringify(s);
  return [
    'server:',
    `  listen: ${q(listenAddr)}`,
    `  base_url: ${q(`http://${listenAddr}`)}`,
    '  contact: "mailto:interop@example.com"',
    '  fees:',
    `    network: ${q(network)}`,
    `    pay_to: ${q(payTo)}`,
    `    facilitator_url: ${q(facilitatorUrl)}`,
    storeYAML ?? 'store:\n  driver: memory',
    'keys:',
    `  receipt_key_file: ${q(path.join(dataDir, 'receipt-keys.json'))}`,
    `rules: ${JSON.stringify(rules)}`,
    extra,
    '',
  ].join('\n');
}

/**
 * startServe runs `payguard serve` on a fresh loopback port with its state in dir. args default to
 * --offline. Resolves to {url, dir, yaml, stop(), output()}.
 */
export async function startServe({ dir, payTo, facilitatorUrl, network, rules, storeYAML, extra, env = {}, args = ['--offline'] }) {
  fs.mkdirSync(dir, { recursive: true });
  const listenAddr = `127.0.0.1:${await freePort()}`;
  const yaml = serveYAML({ listenAddr, dataDir: dir, payTo, facilitatorUrl, network, rules, storeYAML, extra });
  const run = await startPayguard({ mode: 'serve', yaml, dir, args, waitFor: [listenAddr], env });
  return { url: `http://${listenAddr}`, dir, yaml, stop: run.stop, output: run.output };
}
