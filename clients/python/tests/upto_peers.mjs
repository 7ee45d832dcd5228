// The real peers for the Python upto tests, from the interop harness (interop/lib): the local offline
// facilitator and the official @x402/express seller with @x402/evm's upto routes. Prints one JSON line of
// URLs, runs until stdin closes.
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerUpto } from '../../../interop/lib/seller-upto.mjs';

const fac = await startFacilitator();
const seller = await startSellerUpto({ facilitatorUrl: fac.url });
console.log(JSON.stringify({ facilitator: fac.url, seller: seller.url }));

const stop = async () => {
  await seller.close();
  await fac.close();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
