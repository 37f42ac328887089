#!/bin/sh
# plot-report.sh -- draws a --report_file CSV of ravel-bench (or db_bench)
# as a PNG chart of throughput over time, one line per database, so that a
# stall is seen rather than read.
#
#   scripts/plot-report.sh REPORT.csv [OUT.png] [TITLE]
#
# REPORT.csv is what --report_interval_seconds writes:
#     secs_elapsed,interval_qps[,interval_qps_db0,interval_qps_db1,...]
# interval_qps counts the operations of the interval (db_bench's meaning);
# the chart divides it by the interval's length (this row's secs_elapsed
# minus the previous row's) to plot operations per second.  With per-database
# columns (ravel-bench --num_multi_db) it draws one line per database;
# without, one line for the whole.  Set TOTAL=1 to draw the whole as well.
# OUT.png defaults to REPORT.png beside the CSV; TITLE to the CSV's name.
#
# Needs gnuplot: when it is missing the script installs Debian's
# gnuplot-nox (apt-get update, then apt-get install; as root, or through
# sudo).  NO_INSTALL=1 makes it fail instead.
set -eu

die() { echo "plot-report: $*" >&2; exit 1; }

if [ $# -lt 1 ] || [ $# -gt 3 ]; then
    die "usage: $0 REPORT.csv [OUT.png] [TITLE]"
fi
csv=$1
out=${2:-${csv%.csv}.png}
title=${3:-$(basename "$csv")}
[ -r "$csv" ] || die "cannot read $csv"
head -n 1 "$csv" | grep -q '^secs_elapsed,interval_qps' ||
    die "$csv: not a report file (its first line is not secs_elapsed,interval_qps...)"
[ "$(wc -l <"$csv")" -ge 2 ] ||
    die "$csv: no interval was reported (the benchmark ran shorter than one interval?)"

install_gnuplot() {
    [ -z "${NO_INSTALL:-}" ] || die "gnuplot is not installed (NO_INSTALL is set)"
    command -v apt-get >/dev/null 2>&1 ||
        die "gnuplot is not installed and there is no apt-get to install it"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "gnuplot is missing; installing it needs root"
        sudo=sudo
    fi
    echo "plot-report: installing gnuplot-nox" >&2
    $sudo apt-get update -qq >&2 || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gnuplot-nox >&2 ||
        die "apt-get install gnuplot-nox failed"
}
command -v gnuplot >/dev/null 2>&1 || install_gnuplot

work=$(mktemp -d "${TMPDIR:-/tmp}/plot-report.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# The data as whitespace-separated columns: seconds, then ops/s of the
# whole and of each database.  Also prints the number of databases.
ndb=$(awk -F, -v data="$work/data" '
NR == 1 { ndb = NF - 2; next }
{
    dt = $1 - prev; prev = $1
    if (dt <= 0) dt = 1
    line = $1
    for (i = 2; i <= NF; i++) line = line " " $i / dt
    print line >data
}
END { print ndb }' "$csv")

# pngcairo draws smoother lines; plain png (libgd) is the fallback.
terminal=png
gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo && terminal=pngcairo

plots=""
if [ "$ndb" -gt 0 ]; then
    i=0
    while [ "$i" -lt "$ndb" ]; do
        plots="$plots${plots:+, }'$work/data' using 1:(\$$((i + 3))/1000) with lines lw 2 title 'db$i'"
        i=$((i + 1))
    done
fi
if [ "$ndb" -eq 0 ] || [ -n "${TOTAL:-}" ]; then
    plots="$plots${plots:+, }'$work/data' using 1:(\$2/1000) with lines lw 2 dt 2 title 'all'"
fi

# Quotes in the title would end gnuplot's string.
title=$(printf '%s' "$title" | tr -d "'\"")
gnuplot <<EOF || die "gnuplot failed"
set terminal $terminal size 1200,500
set output '$out'
set title '$title'
set xlabel 'seconds'
set ylabel 'thousand operations per second'
set xrange [0:*]
set yrange [0:*]
set grid
set key outside right top
set format y '%g'
plot $plots
EOF
echo "$out"
