#!/usr/bin/env bash
# How the cost grows (issue 41): BLOOM_DEDUP against ROW_NUMBER at 10^5, 10^6 and 10^7 rows (ids =
# rows / 2) on both state backends, one SqlBenchmark invocation per size (each with its own warm-up
# and alternating rounds), every one appending its medians to one CSV (-Dbench.csv); then the
# chart of records/s against distinct ids (SqlGrowthChart). Prints how long each step took.
#
#   benchmarks/sql-growth/run.sh    # after: mvn -B -q -o package -pl operators,benchmarks -DskipTests
#   SIZES="10000" ROUNDS=1 CSV=/tmp/g.csv OUT=/tmp/g.png benchmarks/sql-growth/run.sh   # a smoke run
#
# Environment: SIZES ("100000 1000000 10000000", rows per step), ROUNDS (3), BACKENDS
# (hashmap,rocksdb), QUERIES (row_number,bloom_dedup,bloom_dedup_whole,row_number_ttl), BUDGET (90m:
# a run past it is stopped and marked on the chart), CSV (benchmarks/sql-growth/sql-growth.csv,
# appended to: a size measured again is a later line, and the chart takes the later line of a
# point), OUT (docs/sql-dedup-growth.png), LOGS (benchmarks/sql-growth: each step's output,
# sql-growth-ROWS-BACKENDS.log, with its Markdown tables), XMX (3g), JAVA_OPTS (none; e.g.
# -Dbench.flink.execution.checkpointing.incremental=true), JAR (benchmarks/target/benchmarks.jar,
# copied to WORK first so that a rebuild during the sweep changes nothing), WORK
# (/tmp/bloomstream-sql-growth).
# WITH_1E8=1 adds ROWS_1E8 (10^8) rows on RocksDB only, after the other sizes: ROUNDS_1E8 rounds (1:
# one run of a query there may take an hour on 2 cores, plus a warm-up at a tenth), BUDGET_1E8 (3h)
# per run; its full checkpoints every 10 s write gigabytes to /tmp.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${SIZES:-"100000 1000000 10000000"}
ROUNDS=${ROUNDS:-3}
BACKENDS=${BACKENDS:-hashmap,rocksdb}
QUERIES=${QUERIES:-row_number,bloom_dedup,bloom_dedup_whole,row_number_ttl}
BUDGET=${BUDGET:-90m}
CSV=${CSV:-benchmarks/sql-growth/sql-growth.csv}
OUT=${OUT:-docs/sql-dedup-growth.png}
LOGS=${LOGS:-benchmarks/sql-growth}
XMX=${XMX:-3g}
JAVA_OPTS=${JAVA_OPTS:-}
JAR=${JAR:-benchmarks/target/benchmarks.jar}
WORK=${WORK:-/tmp/bloomstream-sql-growth}
WITH_1E8=${WITH_1E8:-0}
ROWS_1E8=${ROWS_1E8:-100000000}
ROUNDS_1E8=${ROUNDS_1E8:-1}
BUDGET_1E8=${BUDGET_1E8:-3h}

[ -f "$JAR" ] || { echo "no $JAR: build it with mvn -B -q -o package -pl operators,benchmarks -DskipTests" >&2; exit 2; }
for rows in $SIZES $ROWS_1E8; do
    [[ $rows =~ ^[0-9]+$ && $rows -ge 10 ]] || { echo "SIZES, ROWS_1E8: a row count of at least 10, got '$rows'" >&2; exit 2; }
done
mkdir -p "$WORK" "$LOGS" "$(dirname "$CSV")" "$(dirname "$OUT")"
cp "$JAR" "$WORK/benchmarks.jar"
JAR="$WORK/benchmarks.jar"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"\
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?'), CSV: $CSV"

duration() { printf '%dh%02dm%02ds' $(($1 / 3600)) $(($1 % 3600 / 60)) $(($1 % 60)); }

step() { # rows backends rounds budget: one SqlBenchmark invocation, appending to the CSV
    local rows=$1 backends=$2 rounds=$3 budget=$4 start=$SECONDS
    local log="$LOGS/sql-growth-$rows-${backends//,/-}.log"
    echo "== $rows rows, $((rows / 2)) ids, $backends, $rounds round(s), budget $budget:" \
        "started $(date -u +%H:%M:%S) UTC, output in $log"
    # shellcheck disable=SC2086 # JAVA_OPTS: several options
    java -Xmx"$XMX" -Dbench.csv="$CSV" -Dbench.budget="$budget" $JAVA_OPTS -cp "$JAR" \
        io.bloomstream.benchmarks.SqlBenchmark "$rows" "$((rows / 2))" "$backends" "$QUERIES" "$rounds" \
        > "$log" 2>&1 || { echo "SqlBenchmark failed: see $log" >&2; tail -20 "$log" >&2; exit 1; }
    sed -n '/^### Medians/,$p' "$log"
    echo "== $rows rows on $backends took $(duration $((SECONDS - start)))"
}

total=$SECONDS
for rows in $SIZES; do
    step "$rows" "$BACKENDS" "$ROUNDS" "$BUDGET"
done
if [ "$WITH_1E8" = 1 ]; then
    step "$ROWS_1E8" rocksdb "$ROUNDS_1E8" "$BUDGET_1E8"
fi
start=$SECONDS
java -cp "$JAR" io.bloomstream.benchmarks.SqlGrowthChart --out="$OUT" "$CSV"
echo "== chart took $(duration $((SECONDS - start))); the sweep $(duration $((SECONDS - total)))"
