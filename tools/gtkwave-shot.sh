#!/bin/sh
# gtkwave-shot.sh DUMP.vcd OUT.png [WIDTHxHEIGHT]
#
# Opens DUMP.vcd with its save file (DUMP.gtkw, written by `nisim run
# --vcd`) in GTKWave on a virtual X display and saves a screenshot of the
# GTKWave window to OUT.png, scaled to at most 1200 pixels wide and
# quantised to 64 colours so that it stays small enough for the docs.
# Needs gtkwave, Xvfb, xwininfo and ImageMagick (Debian: apt-get install
# gtkwave xvfb x11-utils imagemagick). Not part of `make test`.
set -eu
vcd=$1
out=$2
size=${3:-1400x900}
gtkw=${vcd%.*}.gtkw
[ -f "$vcd" ] || { echo "gtkwave-shot.sh: $vcd: no such file" >&2; exit 2; }
[ -f "$gtkw" ] || { echo "gtkwave-shot.sh: $gtkw: no such file (run nisim with --vcd)" >&2; exit 2; }
for tool in gtkwave Xvfb xwininfo import convert; do
	command -v $tool >/dev/null || { echo "gtkwave-shot.sh: $tool is not installed" >&2; exit 2; }
done
tmp=$(mktemp -d)
# A display number nobody uses: the first free one from 90 up.
d=90
while [ -e /tmp/.X$d-lock ] || [ -e /tmp/.X11-unix/X$d ]; do d=$((d + 1)); done
Xvfb :$d -screen 0 ${size}x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
xvfb=$!
gw=
cleanup() {
	[ -n "$gw" ] && kill "$gw" 2>/dev/null || true
	kill "$xvfb" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
sleep 1
# An rc file that keeps GTKWave from asking questions or showing tips.
printf 'splash_disable 1\n' >"$tmp/gtkwaverc"
DISPLAY=:$d HOME=$tmp gtkwave --rcfile "$tmp/gtkwaverc" "$vcd" "$gtkw" >"$tmp/gtkwave.log" 2>&1 &
gw=$!
# GTKWave maps its window only when the dump is loaded (seconds for a large
# VCD); then give it time to draw (it has no "ready" signal).
n=0
until DISPLAY=:$d xwininfo -root -tree 2>/dev/null | grep -q '"GTKWave'; do
	n=$((n + 1))
	if [ $n -gt 120 ] || ! kill -0 "$gw" 2>/dev/null; then
		echo "gtkwave-shot.sh: GTKWave showed no window within 60 s:" >&2
		cat "$tmp/gtkwave.log" >&2
		exit 1
	fi
	sleep 0.5
done
sleep ${GTKWAVE_SHOT_WAIT:-3}
DISPLAY=:$d import -window root "$tmp/shot.png"
convert "$tmp/shot.png" -trim +repage -resize '1200x>' -colors 64 -strip "PNG8:$out"
size=$(wc -c <"$out")
if [ "$size" -lt 10000 ]; then
	echo "gtkwave-shot.sh: $out is $size bytes: GTKWave had drawn nothing yet (raise GTKWAVE_SHOT_WAIT)" >&2
	exit 1
fi
echo "$out: $size bytes"
