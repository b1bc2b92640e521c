#!/usr/bin/env bash
# The scale benchmark on a standalone cluster (issue 44, docs/scale.md). Builds the library, the
# job jar and the benchmarks; starts, for each contender in turn, a JobManager and two TaskManagers
# as separate JVMs from the Maven jars, submits the contender with `flink run` (RocksDB,
# incremental checkpoints every 10 s, parallelism 2), kills one TaskManager with SIGKILL midway,
# checks the committed output (no id twice, none missing beyond the filter's rate), stops the
# cluster; then writes the CSV files, the charts and the goals (scale-DISTINCT.md) to
# benchmarks/scale/.
#
# Usage: benchmarks/scale/run.sh [DISTINCT [BUDGET_SECONDS [CONTENDERS]]]
#   DISTINCT        distinct ids, each sent twice (default 10000000: about 13 minutes;
#                   100000000 is the long run, about an hour)
#   BUDGET_SECONDS  the time after which an exact contender is stopped (default 90)
#   CONTENDERS      comma separated (default: pass-through,bloom,bloom-exact,exact,
#                   exact-rocksdb-bloom,sql-bloom-dedup,sql-row-number)
# More Maven options in SCALE_MAVEN_ARGS, such as -Dbloomstream.scale.jfr=true (a JFR profile of
# each TaskManager, in jobs/target/scale-logs-DISTINCT/). Run nothing else on the machine
# meanwhile: the figures are rates.
set -euo pipefail
cd "$(dirname "$0")/../.."
distinct=${1:-10000000}
budget=${2:-90}
contenders=${3:-pass-through,bloom,bloom-exact,exact,exact-rocksdb-bloom,sql-bloom-dedup,sql-row-number}
out="$PWD/benchmarks/scale"
mvn -B verify -Pscale -pl operators,jobs,benchmarks \
  -Dbloomstream.scale.distinct="$distinct" \
  -Dbloomstream.scale.budgetSeconds="$budget" \
  -Dbloomstream.scale.contenders="$contenders" \
  -Dbloomstream.scale.out="$out" ${SCALE_MAVEN_ARGS:-}
java -cp benchmarks/target/benchmarks.jar io.bloomstream.benchmarks.ScaleCharts \
  "$out" "$distinct"
