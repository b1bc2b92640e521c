#!/usr/bin/env bash
# The command-line benchmark (issue 32): `dedup` on a file against `LC_ALL=C sort -u`, the
# command's own pass-through (the same read, parse and write without the dedup operator) and
# `dedup --exact`, then `frontier` and `screen` on files of their kind. Each contender runs ROUNDS
# times, alternately (the order rotates every round); the script prints the median wall time,
# lines/s and peak RSS of each (GNU time), the spread (min-max), and the goals of issue 42 with the
# ratios of the same run's medians, each met or not.
#
#   benchmarks/command/run.sh            # after: mvn -B -q -pl jobs -am package -DskipTests
#
# Linux, bash, GNU time, awk, md5sum. Environment: ROUNDS (3), DISTINCT (10^7 ids), LINES (2*10^7
# lines), JAR (jobs/target/bloomstream.jar), WORK (/tmp/bloomstream-command-bench: input files,
# outputs), ONLY (dedup: skip frontier and screen), JAVA_OPTS (none: what a user runs), SMALL_HEAP
# (e.g. -Xmx512m: adds the contender dedup-small-heap, dedup run with these JVM options).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
DISTINCT=${DISTINCT:-10000000}
LINES=${LINES:-20000000}
JAR=${JAR:-jobs/target/bloomstream.jar}
WORK=${WORK:-/tmp/bloomstream-command-bench}
JAVA_OPTS=${JAVA_OPTS:-}
TIME=/usr/bin/time
"$TIME" --version 2>&1 | grep -q GNU || { echo "needs GNU time at /usr/bin/time (apt install time)" >&2; exit 2; }
[ -f "$JAR" ] || { echo "no $JAR: build it with mvn -B -q -pl jobs -am package -DskipTests" >&2; exit 2; }
mkdir -p "$WORK"
[ "$JAR" -ef "$WORK/bloomstream.jar" ] || cp "$JAR" "$WORK/bloomstream.jar" # a rebuild during the run changes nothing
JAR="$WORK/bloomstream.jar"

IDS="$WORK/ids-$DISTINCT-$LINES.txt"
if [ ! -f "$IDS" ]; then
    echo "generating $IDS ($LINES lines of $DISTINCT distinct 16-char ids, seed 42)"
    java benchmarks/command/GenerateIds.java "$DISTINCT" "$LINES" "$IDS.tmp" 42 && mv "$IDS.tmp" "$IDS"
fi
URLS="$WORK/urls-$DISTINCT-$LINES.txt"
BLOCK="$WORK/block-$((DISTINCT / 10)).txt"
if [ "${ONLY:-}" != dedup ]; then
    if [ ! -f "$URLS" ]; then
        echo "generating $URLS (the ids as URLs on 256 hosts)"
        LC_ALL=C awk '{ printf "https://h%s.example/p/%s\n", substr($0, 1, 2), $0 }' "$IDS" > "$URLS.tmp"
        mv "$URLS.tmp" "$URLS"
    fi
    if [ ! -f "$BLOCK" ]; then
        # ids 0 .. DISTINCT/10 - 1 of the generator: a tenth of the ids of the input
        java benchmarks/command/GenerateIds.java "$((DISTINCT / 10))" "$((DISTINCT / 10))" "$BLOCK" 7
    fi
    rm -f "$WORK/block.bloom"
    java $JAVA_OPTS -jar "$JAR" build-filter --input "$BLOCK" --output "$WORK/block.bloom" \
        --fpp 0.001 > /dev/null
fi
echo "input: $(wc -c < "$IDS") bytes, md5 $(md5sum < "$IDS" | cut -c1-32)"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo),"\
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(java -version 2>&1 | head -1)"

run() { # name command...: appends "name wall_s rss_kb" to results, keeps the last output
    local name=$1; shift
    rm -rf "$WORK/out-$name" "$WORK/out-$name-flagged"
    if ! "$TIME" -f "%e %M" -o "$WORK/time.txt" "$@" > "$WORK/$name.log" 2>&1; then
        echo "$name failed: see $WORK/$name.log" >&2; exit 1
    fi
    echo "$name $(cat "$WORK/time.txt")" >> "$WORK/results.txt"
    printf '  %-14s %7.2f s %8d KiB\n' "$name" $(cat "$WORK/time.txt")
}
dedup() { run dedup java $JAVA_OPTS -jar "$JAR" dedup --input "$IDS" --output "$WORK/out-dedup" \
    --expected-items "$DISTINCT"; }
exact() { run dedup-exact java $JAVA_OPTS -jar "$JAR" dedup --exact --input "$IDS" \
    --output "$WORK/out-dedup-exact" --expected-items "$DISTINCT"; }
pass() { run pass-through java $JAVA_OPTS -jar "$JAR" dedup --pass-through --input "$IDS" \
    --output "$WORK/out-pass-through" --expected-items "$DISTINCT"; }
sortu() { run sort-u sh -c 'LC_ALL=C sort -u -S 4G --parallel=2 "$1" > "$2"' sh "$IDS" "$WORK/out-sort-u.txt"; }
frontier() { run frontier java $JAVA_OPTS -jar "$JAR" frontier --input "$URLS" \
    --output "$WORK/out-frontier" --expected-items "$((DISTINCT / 256 + 1))"; }
screen() { run screen java $JAVA_OPTS -jar "$JAR" screen --filter "$WORK/block.bloom" \
    --input "$IDS" --output "$WORK/out-screen" --flagged-output "$WORK/out-screen-flagged"; }

small() { run dedup-small-heap java $SMALL_HEAP -jar "$JAR" dedup --input "$IDS" \
    --output "$WORK/out-dedup-small-heap" --expected-items "$DISTINCT"; }

contenders=(dedup sortu pass exact)
[ -z "${SMALL_HEAP:-}" ] || contenders+=(small)
[ "${ONLY:-}" = dedup ] || contenders+=(frontier screen)
: > "$WORK/results.txt"
for ((r = 0; r < ROUNDS; r++)); do
    echo "round $((r + 1)) of $ROUNDS"
    n=${#contenders[@]}
    for ((i = 0; i < n; i++)); do
        ${contenders[$(((i + r) % n))]}
    done
done

echo
echo "lines written: dedup $(cat "$WORK"/out-dedup/*.txt | wc -l), dedup --exact"\
    "$(cat "$WORK"/out-dedup-exact/*.txt | wc -l), sort -u $(wc -l < "$WORK/out-sort-u.txt")"
awk -v lines="$LINES" -v rounds="$ROUNDS" '
    { wall[$1] = wall[$1] " " $2; rss[$1] = rss[$1] " " $3 }
    function median(list,   a, n, i, j, t) {
        n = split(list, a, " ")
        for (i = 1; i <= n; i++) a[i] += 0
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        lo = a[1]; hi = a[n]
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {
        printf "%-14s %10s %14s %12s %14s %16s\n", "contender", "wall s", "(min-max)", "lines/s", "peak RSS MiB", "(min-max)"
        split("dedup sort-u pass-through dedup-exact dedup-small-heap frontier screen", order, " ")
        for (k = 1; k <= 7; k++) {
            c = order[k]; if (!(c in wall)) continue
            w[c] = median(wall[c]); wl = lo; wh = hi
            m[c] = median(rss[c]); ml = lo; mh = hi
            printf "%-14s %10.2f %14s %12.0f %14.0f %16s\n", c, w[c], sprintf("(%.2f-%.2f)", wl, wh), lines / w[c], m[c] / 1024, sprintf("(%.0f-%.0f)", ml / 1024, mh / 1024)
        }
        printf "\ngoals of issue 42, medians of %d rounds, alternating:\n", rounds
        goal("dedup time / sort -u time", w["dedup"], w["sort-u"], 1)
        goal("dedup time / pass-through time", w["dedup"], w["pass-through"], 1.25)
        goal("dedup peak RSS / sort -u peak RSS", m["dedup"], m["sort-u"], 0.5)
        goal("dedup --exact time / dedup time", w["dedup-exact"], w["dedup"], 2)
    }
    function goal(what, a, b, most) {
        if (a == "" || b == "" || b == 0) { printf "  %-36s  not measured\n", what; return }
        printf "  %-36s %6.2f  goal <= %-4s  %s\n", what, a / b, most, a / b <= most ? "met" : "NOT MET"
    }' "$WORK/results.txt"
