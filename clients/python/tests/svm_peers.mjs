// The real peers for the Python Solana tests, from the interop harness (interop/lib): the local offline
// facilitator (which checks SVM payments as the official SVM facilitator does), the official @x402/express
// seller on Solana devnet (@x402/svm's scheme) and the loopback stand-in for the Solana RPC the client asks
// (the mint, a blockhash). Prints one JSON line of URLs, runs until stdin closes.
import { startFacilitator } from '../../../interop/lib/facilitator.mjs';
import { startSellerSvm } from '../../../interop/lib/seller-svm.mjs';
import { startSolanaRpc } from '../../../interop/lib/solana.mjs';

const rpc = await startSolanaRpc();
const fac = await startFacilitator();
const seller = await startSellerSvm({ facilitatorUrl: fac.url });
console.log(JSON.stringify({ facilitator: fac.url, seller: seller.url, pay_to: seller.payTo, rpc: rpc.url }));

const stop = async () => {
  await seller.close();
  await fac.close();
  await rpc.close();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
