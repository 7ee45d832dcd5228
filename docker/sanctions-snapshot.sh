#!/bin/sh
# Writes the OFAC list snapshot the container image ships (/usr/share/payguard/sanctions, docker/payguard.yaml's
# screening.sanctions.seed_dir) into OUT: the newest complete sdn.csv in the repository (testdata/ofac, see
# its PROVENANCE.md), decompressed, with a meta.json stating when that copy was fetched from treasury.gov, so
# the proxy reports the snapshot's real age in data_as_of (not the file's modification time, which a build
# resets). payguard serves it only until its first download succeeds. The Dockerfile runs this; so do
# scripts/check-dockerfile.sh and the chart's ci/check.sh, which load the result.
#
#   docker/sanctions-snapshot.sh OUT
set -eu
out=${1:?usage: docker/sanctions-snapshot.sh OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
# Scraped from https://www.treasury.gov/ofac/downloads/sdn.csv on Fri May 3 18:43:23 UTC 2024.
src="$root/testdata/ofac/sdn_csv_2024-05-03/sdn.csv.gz"
as_of="2024-05-03T18:43:23Z"
mkdir -p "$out"
gunzip -c "$src" >"$out/sdn.csv"
printf '{"data_as_of": "%s", "data_as_of_source": "fetch_time", "fetched_at": "%s", "files": {}}\n' "$as_of" "$as_of" >"$out/meta.json"
