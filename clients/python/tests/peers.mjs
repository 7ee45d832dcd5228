// The real peers for the Python interop tests, from the interop harness (interop/lib): the local offline
// facilitator, the official @x402/express seller (and one whose payTo is on the OFAC excerpt) and the real
// `payguard serve` with that excerpt. Prints one JSON line of URLs, runs until stdin closes.
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerV2 } from '../../../interop/lib/seller-v2.mjs';
import { startServe } from '../../../interop/lib/payguard.mjs';

const SERVICE_PAY_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const SANCTIONED = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96'; // LAZARUS GROUP in the OFAC excerpt
const SANCTIONS_DIR = new URL('../../../interop/testdata/ofac', import.meta.url).pathname;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'payguard-py-'));
const fac = await startFacilitator();
const seller = await startSellerV2({ facilitatorUrl: fac.url });
const sanctioned = await startSellerV2({ facilitatorUrl: fac.url, payTo: SANCTIONED });
const api = await startServe({
  dir: path.join(tmp, 'serve'), payTo: SERVICE_PAY_TO, facilitatorUrl: fac.url,
  args: ['--offline', '--sanctions-dir', SANCTIONS_DIR],
});
console.log(JSON.stringify({ facilitator: fac.url, seller: seller.url, sanctioned: sanctioned.url, serve: api.url }));

const stop = async () => {
  await Promise.allSettled([api.stop(), seller.close(), sanctioned.close()]);
  await fac.close();
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
