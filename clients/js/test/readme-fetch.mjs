// Preloaded (node --import) by test/readme.test.mjs when it runs the README's example as written: requests to
// https://api.example/<path> go to the local seller at PAYGUARD_README_SELLER instead (the answer is rebuilt, so
// the SDK sees the URL the example asked for, as it would from the real host).
const seller = process.env.PAYGUARD_README_SELLER;
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const req = new Request(input, init);
  const u = new URL(req.url);
  if (u.hostname !== 'api.example') return realFetch(req);
  const res = await realFetch(new Request(seller + u.pathname + u.search, req));
  return new Response(await res.arrayBuffer(), { status: res.status, statusText: res.statusText, headers: res.headers });
};
