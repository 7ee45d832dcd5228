// payguard's remote MCP server (POST /mcp on `payguard serve`) with real peers: the official MCP TypeScript
// client (@modelcontextprotocol/sdk) over Streamable HTTP, payments signed by the official x402 SDK
// (@x402/core + @x402/evm, the same createPaymentPayload @x402/mcp calls) and settled by the local
// facilitator.
//
// The tests run in order against one server: the free trial (3 calls per IP per UTC day, shared with the
// HTTP API) is spent by the first tests, so the later ones see the payment-required results.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { startFacilitator } from '../lib/facilitator.mjs';
import { startServe } from '../lib/payguard.mjs';
import { BUYER_KEY, BUYER_ADDRESS, SELLER_PAY_TO } from '../lib/wallets.mjs';
import { USDC } from '../lib/networks.mjs';

const SERVICE_PAY_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'; // Anvil account 3
const SANCTIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'ofac');
const SANCTIONED = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96'; // LAZARUS GROUP in the OFAC excerpt
const TOOLS = ['check_endpoint', 'check_payee', 'get_service_info', 'preflight_payment'];
const CART = { cart: { merchant_domain: 'example.com', total_usd: 0.1, pay_to: SELLER_PAY_TO } };

let tmp;
let fac;
let api;
const clients = [];

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'interop-mcp-'));
  fac = await startFacilitator();
  api = await startServe({
    dir: path.join(tmp, 'serve'), payTo: SERVICE_PAY_TO, facilitatorUrl: fac.url,
    args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
  });
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await api?.stop();
  await fac?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const facStats = async () => (await fetch(`${fac.url}/_stats`)).json();

/**
 * connect opens an official MCP client on /mcp. The SDK client always offers its newest protocol version;
 * with protocolVersion its initialize request offers that one instead (as an older client would), and the
 * server's answer decides what the session uses.
 */
async function connect(protocolVersion) {
  const rewrite = async (url, init) => {
    if (protocolVersion && typeof init?.body === 'string') {
      const msg = JSON.parse(init.body);
      if (msg.method === 'initialize') {
        msg.params.protocolVersion = protocolVersion;
        init = { ...init, body: JSON.stringify(msg) };
      }
    }
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), { fetch: rewrite });
  const client = new Client({ name: 'payguard-interop', version: '0.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** paymentRequiredOf checks an x402 MCP payment-required result and returns its PaymentRequired object. */
function paymentRequiredOf(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  const pr = result.structuredContent;
  assert.equal(pr?.x402Version, 2, JSON.stringify(result));
  assert.ok(Array.isArray(pr.accepts) && pr.accepts.length > 0);
  assert.deepEqual(JSON.parse(result.content[0].text), pr, 'content[0].text is the same PaymentRequired');
  return pr;
}

/** payer is the official v2 x402 client with the buyer's key; spend caps off (the test decides). */
function payer() {
  const c = new x402Client();
  registerExactEvmScheme(c, { signer: privateKeyToAccount(BUYER_KEY) });
  c.setSpendControls(false);
  return c;
}

/** exercise lists and calls everything that does not spend the free trial. */
async function exercise(client) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    for (const [name, p] of Object.entries(t.inputSchema.properties ?? {})) {
      assert.ok(p && typeof p === 'object' && p.type && p.description, `${t.name}.${name}: ${JSON.stringify(p)}`);
    }
  }
  const info = await client.callTool({ name: 'get_service_info', arguments: {} });
  assert.equal(info.isError, undefined, JSON.stringify(info));
  assert.equal(info.structuredContent.payment.payTo, SERVICE_PAY_TO);
  assert.equal(info.structuredContent.payment.asset, USDC[8453].address);
  assert.deepEqual(Object.fromEntries(info.structuredContent.tools.map((t) => [t.tool, t.price_usd])),
    { check_payee: '0.01', preflight_payment: '0.02', check_endpoint: '0.005', get_service_info: '0' });
  // The crawler is off: no fresh index, so check_endpoint is a tool error that is not charged.
  const ep = await client.callTool({ name: 'check_endpoint', arguments: { url: 'https://api.example.com/data' } });
  assert.equal(ep.isError, true);
  assert.equal(ep.structuredContent.error.code, 'index_unavailable');

  const { resources } = await client.listResources();
  assert.equal(resources.length, 3);
  for (const r of resources) {
    const { contents } = await client.readResource({ uri: r.uri });
    const body = JSON.parse(contents[0].text);
    assert.ok(body.data_as_of, r.uri);
  }
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name).sort(), ['check-a-merchant', 'preflight-before-paying']);
  const pre = await client.getPrompt({ name: 'preflight-before-paying', arguments: { challenge: JSON.stringify(CART.cart) } });
  assert.match(pre.messages[0].content.text, /preflight_payment/);
  const chk = await client.getPrompt({ name: 'check-a-merchant', arguments: { domain: 'example.com' } });
  assert.match(chk.messages[0].content.text, /check_payee/);
}

describe('payguard MCP with the official TypeScript client', () => {
  it('protocol 2025-03-26: every tool, resource and prompt (two free trial calls)', async () => {
    const { client, transport } = await connect('2025-03-26');
    assert.equal(transport.protocolVersion, '2025-03-26');
    await exercise(client);
    const check = await client.callTool({ name: 'check_payee', arguments: { wallet: SANCTIONED } });
    assert.equal(check.isError, undefined, JSON.stringify(check));
    assert.equal(check.structuredContent.risk, 'high');
    assert.ok(check.structuredContent.flags.includes('sanctioned_address'));
    assert.equal(check._meta['payguard/trial'].remaining, 2);
    const pre = await client.callTool({ name: 'preflight_payment', arguments: CART });
    assert.equal(pre.isError, undefined, JSON.stringify(pre));
    assert.equal(pre.structuredContent.decision, 'allow', JSON.stringify(pre.structuredContent.reasons));
    assert.ok(pre.structuredContent.receipt.jws);
    assert.equal((await facStats()).verify.calls, 0);
  });

  it(`the SDK's default protocol (${LATEST_PROTOCOL_VERSION}): every tool, resource and prompt`, async () => {
    const { client, transport } = await connect();
    assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION);
    await exercise(client);
    // Bad arguments: tool errors, no trial call spent, nothing charged.
    const bad = await client.callTool({ name: 'check_payee', arguments: {} });
    assert.equal(bad.isError, true);
    assert.equal(bad.structuredContent.error.code, 'missing_input');
    const badPre = await client.callTool({ name: 'preflight_payment', arguments: { rules: { max_per_payment: 1 } } });
    assert.equal(badPre.isError, true);
    assert.match(badPre.content[0].text, /additional|max_per_payment/);
  });

  it('the fourth trial call from one IP (HTTP and MCP mixed) is a payment-required result', async () => {
    const http = await fetch(`${api.url}/v1/check?trial=1&address=${SELLER_PAY_TO}`);
    assert.equal(http.status, 200, 'third trial call, over HTTP');
    const { client } = await connect();
    const r = await client.callTool({ name: 'check_payee', arguments: { wallet: SELLER_PAY_TO } });
    const pr = paymentRequiredOf(r);
    assert.equal(pr.error, 'trial_exhausted');
    assert.equal(pr.trial.exhausted, true);
    assert.equal(pr.resource.url, 'mcp://tool/check_payee');
    assert.deepEqual({ amount: pr.accepts[0].amount, payTo: pr.accepts[0].payTo, network: pr.accepts[0].network },
      { amount: '10000', payTo: SERVICE_PAY_TO, network: 'eip155:8453' });
    assert.equal(pr.extensions.bazaar.info.input.type, 'mcp');
    const again = await fetch(`${api.url}/v1/check?trial=1&address=${SELLER_PAY_TO}`);
    assert.equal(again.status, 402, 'and HTTP sees the same counter');
    const s = await facStats();
    assert.equal(s.verify.calls + s.settle.calls, 0);
  });

  it('a paid check_payee: the official x402 client signs, the payment in _meta settles once', async () => {
    const { client } = await connect();
    const args = { wallet: SANCTIONED };
    const pr = paymentRequiredOf(await client.callTool({ name: 'check_payee', arguments: args }));
    const payload = await payer().createPaymentPayload(pr);
    assert.equal(payload.x402Version, 2);
    const paid = await client.callTool({ name: 'check_payee', arguments: args, _meta: { 'x402/payment': payload } });
    assert.equal(paid.isError, undefined, JSON.stringify(paid));
    assert.equal(paid.structuredContent.risk, 'high');
    const settlement = paid._meta['x402/payment-response'];
    assert.equal(settlement.success, true);
    assert.equal(settlement.payer, BUYER_ADDRESS);
    let s = await facStats();
    assert.equal(s.settle.success, 1);
    assert.deepEqual({ amount: s.settled[0].amount, payTo: s.settled[0].payTo, asset: s.settled[0].asset, resource: s.settled[0].resource },
      { amount: '10000', payTo: SERVICE_PAY_TO, asset: USDC[8453].address, resource: 'mcp://tool/check_payee' });
    assert.equal(s.settled[0].transaction, settlement.transaction);

    // The same payment again: the same question gets the kept result (SPEC §8.6), another is refused.
    const retry = await client.callTool({ name: 'check_payee', arguments: args, _meta: { 'x402/payment': payload } });
    assert.equal(retry.isError, undefined, JSON.stringify(retry));
    assert.deepEqual(retry.structuredContent, paid.structuredContent);
    assert.equal(retry._meta['x402/payment-response'].transaction, settlement.transaction);
    const replay = await client.callTool({ name: 'check_payee', arguments: { wallet: BUYER_ADDRESS }, _meta: { 'x402/payment': payload } });
    assert.equal(paymentRequiredOf(replay).error, 'invalid_exact_evm_nonce_already_used');
    s = await facStats();
    assert.equal(s.settle.calls, 1, 'a replay never reaches /settle');
  });

  it('a paid preflight_payment ($0.02) carries the decision receipt and no offer-receipt', async () => {
    const { client } = await connect('2025-03-26');
    const pr = paymentRequiredOf(await client.callTool({ name: 'preflight_payment', arguments: CART }));
    assert.equal(pr.accepts[0].amount, '20000');
    assert.equal(pr.extensions['offer-receipt'], undefined);
    const paid = await client.callTool({ name: 'preflight_payment', arguments: CART,
      _meta: { 'x402/payment': await payer().createPaymentPayload(pr) } });
    assert.equal(paid.isError, undefined, JSON.stringify(paid));
    assert.ok(paid.structuredContent.receipt.jws);
    assert.equal(paid._meta['x402/payment-response'].success, true);
    assert.equal(paid._meta['x402/payment-response'].extensions, undefined);
    const s = await facStats();
    assert.equal(s.settled.at(-1).amount, '20000');
  });

  it('a facilitator outage is a tool error and nothing is settled', async () => {
    const { client } = await connect();
    const pr = paymentRequiredOf(await client.callTool({ name: 'check_payee', arguments: { wallet: SELLER_PAY_TO } }));
    const payload = await payer().createPaymentPayload(pr);
    const before = (await facStats()).settle.success;
    await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":true}' });
    try {
      const r = await client.callTool({ name: 'check_payee', arguments: { wallet: SELLER_PAY_TO }, _meta: { 'x402/payment': payload } });
      assert.equal(r.isError, true);
      assert.equal(r.structuredContent.error.code, 'facilitator_unavailable');
    } finally {
      await fetch(`${fac.url}/_outage`, { method: 'POST', body: '{"on":false}' });
    }
    assert.equal((await facStats()).settle.success, before);
  });
});
