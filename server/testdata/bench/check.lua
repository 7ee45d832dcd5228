-- wrk script: GET /v1/check?trial=1 with a name and a wallet (no domain: the server runs --offline), from a
-- random client IP per request (see preflight.lua).
-- Run: wrk -t2 -c32 -d15s --latency -s check.lua http://127.0.0.1:18091
local counter = 0
setup = function(thread)
  counter = counter + 1
  thread:set("id", counter)
end
init = function(args) math.randomseed(os.time() * 1000 + id) end

request = function()
  wrk.headers["X-Forwarded-For"] = string.format("%d.%d.%d.%d", math.random(1, 223), math.random(0, 255), math.random(0, 255), math.random(1, 254))
  return wrk.format("GET", "/v1/check?trial=1&name=Acme%20Widgets%20LLC&address=0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC")
end

done = function(summary, latency, requests)
  io.write(string.format("status errors (non-2xx): %d\n", summary.errors.status))
end
