#!/usr/bin/env bash
# Peak resident memory of each query in a JVM of its own (issue 41: BLOOM_DEDUP's peak RSS at the
# same -Xmx no more than ROW_NUMBER's). SqlBenchmark runs its queries one after another in one JVM,
# where a query's peak includes the heap that earlier queries left committed; here each query runs
# alone (its warm-up at a tenth, then one measured round), and the line printed is the JVM's peak
# (VmHWM) over the measured run.
#
#   benchmarks/sql-growth/rss.sh                     # after: mvn -B -q -o package -pl operators,benchmarks -DskipTests
#   SIZES="1000000" BACKENDS=hashmap benchmarks/sql-growth/rss.sh
#
# Environment: SIZES ("1000000 10000000", rows; ids = rows / 2), BACKENDS (hashmap,rocksdb; at 10^7
# only rocksdb unless BACKENDS_1E7 says otherwise), QUERIES (row_number,row_number_ttl,bloom_dedup,
# bloom_dedup_whole), XMX (3g), JAVA_OPTS (none; e.g. -Xms3g, a heap fixed as a TaskManager's is),
# JAR (benchmarks/target/benchmarks.jar).
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${SIZES:-"1000000 10000000"}
BACKENDS=${BACKENDS:-hashmap,rocksdb}
BACKENDS_1E7=${BACKENDS_1E7:-rocksdb}
QUERIES=${QUERIES:-row_number,row_number_ttl,bloom_dedup,bloom_dedup_whole}
XMX=${XMX:-3g}
JAVA_OPTS=${JAVA_OPTS:-}
JAR=${JAR:-benchmarks/target/benchmarks.jar}
[ -f "$JAR" ] || { echo "no $JAR: build it with mvn -B -q -o package -pl operators,benchmarks -DskipTests" >&2; exit 2; }
echo "| rows / ids | backend | query | records/s | peak RSS MiB (-Xmx$XMX $JAVA_OPTS) |"
echo "| --- | --- | --- | --- | --- |"
for rows in $SIZES; do
    backends=$BACKENDS
    [ "$rows" -ge 10000000 ] && backends=$BACKENDS_1E7
    for backend in ${backends//,/ }; do
        for query in ${QUERIES//,/ }; do
            # shellcheck disable=SC2086 # JAVA_OPTS: several options
            line=$(java -Xmx"$XMX" $JAVA_OPTS -cp "$JAR" io.bloomstream.benchmarks.SqlBenchmark \
                "$rows" $((rows / 2)) "$backend" "$query" 1 2>&1 | grep -E "^$backend/$query, round 1:")
            rate=$(sed -E 's/.* s, ([0-9,]+) records\/s.*/\1/' <<<"$line")
            rss=$(sed -E 's/.*peak RSS ([0-9,]+) MiB.*/\1/' <<<"$line")
            echo "| $rows / $((rows / 2)) | $backend | $query | $rate | $rss |"
        done
    done
done
