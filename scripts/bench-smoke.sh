#!/usr/bin/env bash
# bench-smoke.sh: run each benchmark behind a figure of issue 36 once (-benchtime 1x), so that a change that
# breaks one (a panic, a failed check inside its loop, a decision that is no longer allow) fails CI. It asserts
# no time and no size: the figures and their full commands are in docs/BENCHMARKS.md and docs/benchmarks/.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./proxy -run '^$' -benchtime 1x -benchmem \
  -bench 'BenchmarkGuardChallenge$|BenchmarkUnpaid402Bolt$|BenchmarkUnpaid402Redis$|BenchmarkHostileChallenge$|BenchmarkUnpaidCount$|BenchmarkPassThrough$'
# The end-to-end figures need the real binary and proxy-bench (not in this repository), so they are not run
# here: proxy/internal/hostload/bench-rss.sh (RSS after 100,000 decisions) and bench-passthrough.sh.
bash -n proxy/internal/hostload/bench-rss.sh proxy/internal/hostload/bench-passthrough.sh
go test ./store/bolt -run '^$' -benchtime 1x -benchmem -bench 'BenchmarkReserveTicket$'
# The engine's part of an allowed 402, with empty and with full rule lists (docs/benchmarks/preflight.md).
go test ./preflight -run '^$' -benchtime 1x -benchmem -bench 'BenchmarkDecideUnsigned402'
# The Redis side of an allowed 402: scripts, their commands and redis-server's CPU per decision (skips without
# redis-server).
go test ./store/redis -run '^$' -benchtime 1x -bench 'BenchmarkDecision402$'
go test ./screening/sanctions -run '^$' -benchtime 1x -bench 'BenchmarkIndexFootprint$'
# serve (docs/benchmarks/server.md): the rate.sh call in process, then rate.sh itself for 2 s at a low rate,
# floor server and payguard on the bolt store (its full run: 5,000/s and 10,000/s, 12 s each).
go test ./server -run '^$' -benchtime 1x -benchmem -bench 'BenchmarkPreflightTrialBolt$'
DURATION=2s FLOOR=both STORE=bolt server/testdata/bench/rate.sh 500
