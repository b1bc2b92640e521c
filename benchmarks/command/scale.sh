#!/usr/bin/env bash
# When does Bloom dedup win (issue 42)? `dedup` against `LC_ALL=C sort -u -S 4G --parallel=2` and
# `LC_ALL=C awk '!s[$0]++'` on files of growing size: for each size in LINES, a file of that many
# lines over LINES/2 distinct 16-char ids (GenerateIds.java, seed 42), each contender run ROUNDS
# times, alternately (the order rotates every round). Each run appends a line to CSV: lines,
# distinct, contender, round, wall s and peak RSS KiB (GNU time), lines written, and its status:
# ok; timeout (awk past TIMEOUT); out-of-memory (awk past AWK_MEMORY, or killed). Then draws the
# chart with CommandScaleChart (docs/cli-scale.png, docs/cli-scale-rss.png).
#
#   mvn -B -q -pl operators,jobs,benchmarks package -DskipTests   # the jar and the chart's code
#   benchmarks/command/scale.sh                                  # 10^6, 10^7 and 10^8 lines
#   LINES="100000 1000000" benchmarks/command/scale.sh           # a quick check
#
# Linux, bash, GNU time, GNU coreutils (timeout), awk. Environment: LINES (1000000 10000000
# 100000000), ROUNDS (3 below 10^8 lines, 1 from there), TIMEOUT (awk's budget in seconds, 1200),
# AWK_MEMORY (awk's limit of virtual memory in KiB, half the machine's memory), JAR
# (jobs/target/bloomstream.jar), WORK (/tmp/bloomstream-command-scale: inputs, outputs), CSV
# (WORK/scale.csv, appended to: a size measured again is redrawn with the later runs), CHART
# (docs/cli-scale.png; none: no chart), CHART_JAR (benchmarks/target/benchmarks.jar).
set -euo pipefail
cd "$(dirname "$0")/../.."
LINES=${LINES:-"1000000 10000000 100000000"}
TIMEOUT=${TIMEOUT:-1200}
AWK_MEMORY=${AWK_MEMORY:-$(awk '/MemTotal/ {print int($2 / 2)}' /proc/meminfo)}
JAR=${JAR:-jobs/target/bloomstream.jar}
WORK=${WORK:-/tmp/bloomstream-command-scale}
CSV=${CSV:-$WORK/scale.csv}
CHART=${CHART:-docs/cli-scale.png}
CHART_JAR=${CHART_JAR:-benchmarks/target/benchmarks.jar}
TIME=/usr/bin/time
"$TIME" --version 2>&1 | grep -q GNU || { echo "needs GNU time at /usr/bin/time (apt install time)" >&2; exit 2; }
[ -f "$JAR" ] || { echo "no $JAR: build it with mvn -B -q -pl operators,jobs package -DskipTests" >&2; exit 2; }
if [ "$CHART" != none ] && [ ! -f "$CHART_JAR" ]; then
    echo "no $CHART_JAR: build it with mvn -B -q -pl operators,benchmarks package -DskipTests" >&2; exit 2
fi
mkdir -p "$WORK"
[ "$JAR" -ef "$WORK/bloomstream.jar" ] || cp "$JAR" "$WORK/bloomstream.jar" # a rebuild during the run changes nothing
JAR="$WORK/bloomstream.jar"
[ -s "$CSV" ] || echo "lines,distinct,contender,round,wall_s,peak_rss_kib,lines_out,status" > "$CSV"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"\
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1),"\
    "awk is $(readlink -f "$(command -v awk)")"

run() { # name command...: times one run and appends its line to the CSV
    local name=$1; shift
    local out="$WORK/out-$name" status=ok rc=0
    rm -rf "$out"
    "$TIME" -f "%e %M" -o "$WORK/time.txt" "$@" > "$WORK/$name.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ]; then
        if [ "$name" != awk ]; then
            echo "$name failed (status $rc): see $WORK/$name.log" >&2; exit 1
        elif [ "$rc" -eq 124 ]; then
            status=timeout
        elif [ "$rc" -eq 137 ] || grep -qi "memory\|cannot allocate" "$WORK/$name.log"; then
            status=out-of-memory
        else
            echo "awk failed (status $rc): see $WORK/awk.log" >&2; exit 1
        fi
    fi
    # GNU time writes "Command exited with non-zero status N" before its figures
    read -r wall rss < <(tail -1 "$WORK/time.txt")
    local written=
    if [ "$status" = ok ]; then
        if [ -d "$out" ]; then written=$(cat "$out"/*.txt | wc -l); else written=$(wc -l < "$out"); fi
    fi
    echo "$n,$distinct,$name,$r,$wall,$rss,$written,$status" >> "$CSV"
    printf '  %-6s %9.2f s %10d KiB %10s lines  %s\n' "$name" "$wall" "$rss" "${written:--}" "$status"
    rm -rf "$out"
}
dedup() { run dedup java -jar "$JAR" dedup --input "$IDS" --output "$WORK/out-dedup" \
    --expected-items "$distinct"; }
sortu() { run sort-u sh -c 'LC_ALL=C sort -u -S 4G --parallel=2 "$1" > "$2"' sh "$IDS" "$WORK/out-sort-u"; }
awks() { run awk timeout "$TIMEOUT" sh -c 'ulimit -v "$3"; LC_ALL=C awk '\''!s[$0]++'\'' "$1" > "$2"' \
    sh "$IDS" "$WORK/out-awk" "$AWK_MEMORY"; }

contenders=(dedup sortu awks)
for n in $LINES; do
    distinct=$((n / 2))
    IDS="$WORK/ids-$distinct-$n.txt"
    if [ ! -f "$IDS" ]; then
        echo "generating $IDS ($n lines of $distinct distinct 16-char ids, seed 42)"
        java benchmarks/command/GenerateIds.java "$distinct" "$n" "$IDS.tmp" 42
        mv "$IDS.tmp" "$IDS"
    fi
    rounds=${ROUNDS:-$([ "$n" -ge 100000000 ] && echo 1 || echo 3)}
    echo "$n lines ($(wc -c < "$IDS") bytes), $distinct distinct, $rounds rounds"
    for ((r = 1; r <= rounds; r++)); do
        for ((i = 0; i < 3; i++)); do
            ${contenders[$(((i + r - 1) % 3))]}
        done
    done
done

if [ "$CHART" != none ]; then
    java -cp "$CHART_JAR" io.bloomstream.benchmarks.CommandScaleChart --out="$CHART" "$CSV"
fi
