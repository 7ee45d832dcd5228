// README.md's agent snippets, run as written: the ```js block (global fetch with undici's EnvHttpProxyAgent,
// @x402/fetch) and the ```python block (the PyPI x402 client's httpx transport) each pay an official seller through a
// payguard proxy, configured only by the shell README gives: `eval "$(payguard env)"` (HTTP(S)_PROXY, the CA
// variables), evaluated by bash, and AGENT_KEY.
// A snippet that drifts from the SDKs, or from what payguard needs, fails here.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startSellerV2 } from '../lib/seller-v2.mjs';
import { buildPayguard, startProxy } from '../lib/payguard.mjs';
import { BUYER_KEY } from '../lib/wallets.mjs';

const INTEROP = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.join(INTEROP, '..');
const SANCTIONS_DIR = path.join(INTEROP, 'testdata', 'ofac');
const execFileP = promisify(execFile);
const PYTHON = path.join(ROOT, 'clients', 'python', '.venv', 'bin', 'python');

// block returns README.md's first fenced block in lang.
function block(lang) {
  const md = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = md.match(new RegExp('```' + lang + '\\n([\\s\\S]*?)```'));
  assert.ok(m, `README.md has no \`\`\`${lang} block`);
  return m[1];
}

function run(cmd, args, env) {
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c) => { stdout += c; });
    p.stderr.on('data', (c) => { stderr += c; });
    p.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

let tmp;
let fac;
let seller;
let guard;
let shell; // README's exports, pointing at this guard

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-readme-'));
  fac = await startFacilitator();
  seller = await startSellerV2({ facilitatorUrl: fac.url, network: 'base' });
  guard = await startProxy({ dir: path.join(tmp, 'guard'), token: 'readme-admin-token-0123456789abcdef', holdWait: '0s',
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR] });
  // The shell README tells the user to make: `eval "$(payguard env)"`, with this guard's configuration. The
  // variables come from bash having evaluated payguard env's output, not from this test.
  const bin = await buildPayguard();
  const { stdout } = await execFileP('bash', ['-c', 'set -eu; eval "$("$0" env --config "$1")"; env -0', bin, path.join(guard.dir, 'payguard.yaml')],
    { env: { PATH: process.env.PATH } });
  const fromEnv = Object.fromEntries(stdout.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']) {
    assert.ok(fromEnv[name], `payguard env did not set ${name}`);
  }
  assert.equal(fromEnv.HTTPS_PROXY, guard.proxyUrl);
  assert.equal(fromEnv.NODE_EXTRA_CA_CERTS, guard.caFile);
  for (const bashOwn of ['PATH', 'PWD', 'OLDPWD', 'SHLVL', '_']) delete fromEnv[bashOwn];
  shell = { ...process.env, NO_PROXY: '', no_proxy: '', ...fromEnv, AGENT_KEY: BUYER_KEY };
});

after(async () => {
  await guard?.stop();
  await Promise.all([fac?.close(), seller?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const settled = async () => (await (await fetch(`${fac.url}/_stats`)).json()).settled.length;

describe("README's agents pay through payguard", () => {
  it('Node: global fetch with EnvHttpProxyAgent and @x402/fetch', async () => {
    // Written inside interop/ so that its imports resolve to interop's pinned packages.
    const file = path.join(INTEROP, `.readme-agent-${process.pid}.mjs`);
    fs.writeFileSync(file, block('js'));
    try {
      const before = await settled();
      const r = await run(process.execPath, [file, `${seller.url}/cheap`], shell);
      assert.equal(r.code, 0, r.stderr);
      // "allow" comes from payguard: the request went through the proxy, and the payment was released.
      assert.match(r.stdout, /^200 allow /, r.stdout + r.stderr);
      assert.equal(await settled(), before + 1);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });

  it('Python: the x402 httpx transport through HTTPS_PROXY', async (t) => {
    if (!fs.existsSync(PYTHON)) {
      if (process.env.CI === 'true') assert.fail(`${PYTHON} is missing (CI=true: scripts/test-python.sh --setup makes it)`);
      t.skip(`no ${PYTHON}: run scripts/test-python.sh --setup to run README's Python agent`);
      return;
    }
    const file = path.join(tmp, 'agent.py');
    fs.writeFileSync(file, block('python'));
    const before = await settled();
    const r = await run(PYTHON, [file, `${seller.url}/cheap`], shell);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^200 allow /, r.stdout + r.stderr);
    assert.equal(await settled(), before + 1);
  });
});
