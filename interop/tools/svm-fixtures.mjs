// Writes x402/svm/svmtest/official.json: Solana "exact" payments built by the official @x402/svm client
// (ExactSvmScheme, against the loopback RPC stand-in) and associated-token-account vectors derived with
// @solana/kit, so that payguard's Go reader is tested against what the official client really sends without
// the Go tests needing Node. Run from the repo root: node interop/tools/svm-fixtures.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import {
  SOLANA_DEVNET, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, USDC_DEVNET, altSellerSigner, ata, buyerSigner, feePayerSigner,
  sellerSigner, startSolanaRpc,
} from '../lib/solana.mjs';

const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
const MINT_2022 = (await altSellerSigner()).address; // any 32-byte key serves as a Token-2022 mint here

const rpc = await startSolanaRpc({
  mints: {
    [USDC_DEVNET]: { program: TOKEN_PROGRAM, decimals: 6 },
    [USDC_MAINNET]: { program: TOKEN_PROGRAM, decimals: 6 },
    [MINT_2022]: { program: TOKEN_2022_PROGRAM, decimals: 6 },
  },
});
try {
  const buyer = await buyerSigner();
  const seller = (await sellerSigner()).address;
  const feePayer = (await feePayerSigner()).address;
  const client = new ExactSvmScheme(buyer, { rpcUrl: rpc.url });
  const cases = [
    { name: 'devnet-usdc', network: SOLANA_DEVNET, asset: USDC_DEVNET, amount: '10000', program: TOKEN_PROGRAM },
    { name: 'devnet-usdc-memo', network: SOLANA_DEVNET, asset: USDC_DEVNET, amount: '500000', memo: 'pi_3abc123def456', program: TOKEN_PROGRAM },
    { name: 'mainnet-usdc', network: SOLANA_MAINNET, asset: USDC_MAINNET, amount: '1', program: TOKEN_PROGRAM },
    { name: 'token-2022', network: SOLANA_DEVNET, asset: MINT_2022, amount: '123456789', program: TOKEN_2022_PROGRAM },
  ];
  const payments = [];
  for (const c of cases) {
    const requirement = {
      scheme: 'exact', network: c.network, amount: c.amount, asset: c.asset, payTo: seller, maxTimeoutSeconds: 60,
      extra: { feePayer, ...(c.memo ? { memo: c.memo } : {}) },
    };
    const { payload } = await client.createPaymentPayload(2, requirement);
    payments.push({
      name: c.name, requirement, transaction: payload.transaction,
      want: { payer: buyer.address, destination: await ata(seller, c.asset, c.program), tokenProgram: c.program },
    });
  }
  const owners = [seller, buyer.address, feePayer, '11111111111111111111111111111111'];
  const atas = [];
  for (const owner of owners) {
    for (const mint of [USDC_DEVNET, USDC_MAINNET]) {
      for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM]) atas.push({ owner, mint, program, ata: await ata(owner, mint, program) });
    }
  }
  const out = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'x402', 'svm', 'svmtest', 'official.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify({
    source: '@x402/svm 2.27.0 ExactSvmScheme (client) and @solana/kit 5.5.1 getProgramDerivedAddress; written by interop/tools/svm-fixtures.mjs',
    payments, atas,
  }, null, 2)}\n`);
  console.log(`wrote ${out}: ${payments.length} payments, ${atas.length} ATA vectors; rpc calls: ${rpc.calls.join(',')}`);
} finally {
  await rpc.close();
}
