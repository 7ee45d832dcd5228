-- wrk script: POST /v1/preflight?trial=1 with a v2 challenge body. Every request comes from a random client
-- IP (X-Forwarded-For, believed because the server trusts the loopback proxy in bench.yaml), so the real
-- 3-per-IP-per-day trial quota is taken in the store on every call without running out.
-- Run: wrk -t2 -c32 -d15s --latency -s preflight.lua http://127.0.0.1:18091
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"challenge":{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]},"rules":{"max_per_payment_usd":1}}'

local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("id", counter)
end
init = function(args) math.randomseed(os.time() * 1000 + id) end

request = function()
  wrk.headers["X-Forwarded-For"] = string.format("%d.%d.%d.%d", math.random(1, 223), math.random(0, 255), math.random(0, 255), math.random(1, 254))
  return wrk.format(nil, "/v1/preflight?trial=1")
end

done = function(summary, latency, requests)
  io.write(string.format("status errors (non-2xx): %d\n", summary.errors.status))
end
