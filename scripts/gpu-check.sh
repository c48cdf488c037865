#!/usr/bin/env bash
# gpu-check.sh: simvis's speed on this machine's GPU against its CPU caster,
# in one table (issue 31). It builds nothing: it runs a simvis binary built
# beforehand (make build; a binary built on another machine of the same
# architecture runs as is), so that a machine lent for minutes spends them
# measuring.
#
#   scripts/gpu-check.sh [--quick] [--bin BIN] [--scenes DIR] [--seconds S]
#                        [--timeout S] [--backends "gpu cpu"] [--keep DIR]
#                        [--gpucast TESTBIN]
#
# For each backend (gpu, then cpu) it runs `simvis bench --backend B` over
#   MARVIN        scenes/marvin/scene.xml, every sensor;
#   50 MARVINs    DIR/marvin50/scene.xml, 150 scanners, the cycle only
#                 (--cycles: per-sensor figures would take minutes);
#   1M triangles  DIR/mesh1m/scene.xml, every sensor;
#   RAVON         scenes/ravon/scene.xml, every sensor;
#   RAVON lidar   scenes/ravon/lidar128.xml, a 128 x 2048 3D lidar;
#   camera ring   DIR/marvin50/cameras.xml, MARVIN with 16 640x480 cameras,
#                 the cycle only, on the first backend (cameras are drawn
#                 on the GPU whatever the backend): frames/s = 16 x cycles/s;
#                 then again with each picture's read waited for as it is
#                 started (SIMVIS_WAIT_READS=1) instead of behind a fence;
# and prints, per sensor or cycle, frames (or cycles) per second on each
# backend, their ratio and the GPU backend's agreement with the exact caster.
# Cameras are drawn on the GPU whatever --backend says: their two figures are
# two measurements of the same thing. DIR (default out/bench) gets the
# benchmark scenes from `simvis bench --generate` where they are missing
# (under a second). Every bench run is killed after --timeout seconds
# (default 60) and shows as "timeout".
#
# --seconds S is what each measurement takes (default 1: about 90 s in all
# on a machine whose GPU is fast; the whole run must stay under 3 minutes
# there). --quick is --seconds 0.1 --timeout 40: for llvmpipe and other
# software renderers, whose GPU frames of a million triangles take a second.
#
# Where bin/gpucast.test exists (built beforehand: go test -c -o
# bin/gpucast.test ./sensors/gpucast; --gpucast names another), it then runs
# the compute caster's bit-for-bit tests against the CPU caster (failures,
# the first differing distances, and which float64 division New chose: the
# device's, or corrected where the device's is not IEEE 754's) and its
# benchmark (the 150 scanners of 50 MARVINs, the 1M-triangle cave and RAVON
# in one dispatch each, with both divisions, against CastBatch on all
# cores) and prints their lines. The header's "gpu ranges" line says how
# `bench --backend gpu` cast range sensors.
#
# On an NVIDIA machine without the EGL loader (a bare container), the EGL
# libraries travel with the binary as Debian packages in .gl/ (see the device
# notes, ../shared/NOTES.md): run as root, the script unpacks them when
# libEGL.so.1 is not found, and it points __EGL_VENDOR_LIBRARY_FILENAMES at
# NVIDIA's vendor file when that variable is unset and the file exists.
set -u

BIN=bin/simvis
SCENES=out/bench
SECS=1
TIMEOUT=60
BACKENDS="gpu cpu"
KEEP=""
GPUCAST=bin/gpucast.test
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) SECS=0.1 TIMEOUT=40 ;;
	--bin) BIN=$2; shift ;;
	--scenes) SCENES=$2; shift ;;
	--seconds) SECS=$2; shift ;;
	--timeout) TIMEOUT=$2; shift ;;
	--backends) BACKENDS=$2; shift ;;
	--keep) KEEP=$2; shift ;;
	--gpucast) GPUCAST=$2; shift ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-check: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
	shift
done

# Paths given relative to where the script was started, then the
# repository root (the scenes are there).
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
[ "$BIN" = bin/simvis ] || BIN=$(abs "$BIN")
[ "$SCENES" = out/bench ] || SCENES=$(abs "$SCENES")
[ -z "$KEEP" ] || KEEP=$(abs "$KEEP")
[ "$GPUCAST" = bin/gpucast.test ] || GPUCAST=$(abs "$GPUCAST")
cd "$(dirname "$0")/.." || exit 2
if [ ! -x "$BIN" ]; then
	echo "gpu-check: no simvis binary at $BIN: build it beforehand (make build), this script builds nothing" >&2
	exit 2
fi

# The EGL loader and NVIDIA's vendor file (see the header).
if ! ldconfig -p 2>/dev/null | grep -q 'libEGL\.so\.1'; then
	if [ "$(id -u)" = 0 ] && ls .gl/*.deb >/dev/null 2>&1; then
		for f in .gl/*.deb; do dpkg -x "$f" /; done
		ldconfig
		echo "gpu-check: unpacked the EGL libraries of .gl/"
	fi
fi
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
	for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json \
		/usr/share/glvnd/egl_vendor.d/10_nvidia.json /etc/glvnd/egl_vendor.d/10_nvidia.json; do
		if [ -f "$f" ]; then
			export __EGL_VENDOR_LIBRARY_FILENAMES=$f
			echo "gpu-check: __EGL_VENDOR_LIBRARY_FILENAMES=$f"
			break
		fi
	done
fi

if [ ! -f "$SCENES/marvin50/scene.xml" ] || [ ! -f "$SCENES/mesh1m/scene.xml" ] || [ ! -f "$SCENES/marvin50/cameras.xml" ]; then
	"$BIN" bench --generate "$SCENES" --marvin-assets scenes/marvin >/dev/null || exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=$work/rows.tsv
: >"$rows"
start=$(date +%s.%N)
renderer=""
ranges=""

# bench LABEL SCENE BACKEND [FLAGS...]: one run, its rows appended to rows.tsv
# as scene, work, type, backend, per second, within 1 mm, hit/miss, note.
bench() {
	local label=$1 path=$2 backend=$3
	shift 3
	local log=$work/$(echo "$label-$backend" | tr ' ' _).txt t0 t1 rc
	t0=$(date +%s.%N)
	timeout "$TIMEOUT" "$BIN" bench "$path" --backend "$backend" --seconds "$SECS" "$@" >"$log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp "$log" "$KEEP/"; fi
	[ -n "$renderer" ] || renderer=$(sed -n 's/^renderer: //p' "$log" | head -1)
	[ -n "$ranges" ] || ranges=$(sed -n 's/^gpu ranges: //p' "$log" | head -1)
	if [ $rc = 124 ]; then
		printf '%s\t(the run)\t-\t%s\ttimeout\t-\t-\tkilled after %ss\n' "$label" "$backend" "$TIMEOUT" >>"$rows"
		return
	elif [ $rc != 0 ]; then
		printf '%s\t(the run)\t-\t%s\tfailed\t-\t-\texit %s: %s\n' "$label" "$backend" "$rc" \
			"$(tail -1 "$log" | tr '\t' ' ')" >>"$rows"
		return
	fi
	awk -v scene="$label" -v backend="$backend" -v took="$(awk "BEGIN { print $t1 - $t0 }")" '
		BEGIN { OFS = "\t" }
		/^sensor +type/ { table = 1; next }
		!table || NF < 3 { next }
		$3 == "set" {
			# all scanners   set   RATE BEAMS/S N sensors: MS ms per cycle, CPU ms CPU per cycle
			note = $6 " sensors, " $8 " ms/cycle, " $12 " ms CPU"
			print scene, $1 " " $2, "cycle", backend, $4, "-", "-", note
			next
		}
		NF >= 10 {
			# the last field is the backend that rendered, "(gpu)" or "(cpu)"
			print scene, $1, $2, backend, $3, $7, $10, ($NF == "(" backend ")" ? "" : "rendered " $NF)
			next
		}
		{ print scene, $1, $2, backend, $3, "-", "-", "" }
		END { printf "%s\t(the run)\t-\t%s\t-\t-\t-\t%.1f s\n", scene, backend, took }
	' "$log" >>"$rows"
}

for backend in $BACKENDS; do
	bench "MARVIN" scenes/marvin/scene.xml "$backend"
	bench "50 MARVINs" "$SCENES/marvin50/scene.xml" "$backend" --cycles
	bench "1M triangles" "$SCENES/mesh1m/scene.xml" "$backend"
	bench "RAVON" scenes/ravon/scene.xml "$backend"
	bench "RAVON lidar" scenes/ravon/lidar128.xml "$backend"
	if [ "$backend" = "${BACKENDS%% *}" ]; then
		bench "camera ring" "$SCENES/marvin50/cameras.xml" "$backend" --cycles
		SIMVIS_WAIT_READS=1 bench "ring, waiting" "$SCENES/marvin50/cameras.xml" "$backend" --cycles
	fi
done
elapsed=$(awk "BEGIN { print $(date +%s.%N) - $start }")

echo "simvis gpu-check $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "renderer: ${renderer:-unknown}; bench --seconds $SECS; $(printf '%.0f' "$elapsed") s in all"
echo "gpu ranges: ${ranges:-unknown} (how the GPU backend cast range sensors)"
echo "per second: frames (scans) of a sensor, or cycles of a set; gpu/cpu = the GPU backend's rate over the CPU backend's;"
echo "<=1mm and hit/miss: the GPU backend's beams within 1 mm of the exact caster, and beams where one hits and the other not"
awk -F'\t' -v backends="$BACKENDS" '
	{
		key = $1 SUBSEP $2
		if (!(key in seen)) { seen[key] = 1; order[++n] = key; scene[key] = $1; name[key] = $2 }
		if ($3 != "-") type[key] = $3
		rate[key, $4] = $5
		if ($4 == "gpu") { mm[key] = $6; hm[key] = $7 }
		if ($8 != "") note[key] = note[key] (note[key] == "" ? "" : "; ") $4 ": " $8
	}
	END {
		fmt = "%-13s %-14s %-8s %10s %10s %8s %9s %8s  %s\n"
		printf fmt, "scene", "work", "type", "gpu /s", "cpu /s", "gpu/cpu", "<=1mm", "hit/miss", "notes"
		for (i = 1; i <= n; i++) {
			k = order[i]
			g = ((k, "gpu") in rate) ? rate[k, "gpu"] : "-"
			c = ((k, "cpu") in rate) ? rate[k, "cpu"] : "-"
			r = (g + 0 > 0 && c + 0 > 0) ? sprintf("%.2fx", g / c) : "-"
			if (name[k] == "(the run)" || type[k] == "camera") r = "-" # a camera is drawn on the GPU either way
			printf fmt, scene[k], name[k], (k in type) ? type[k] : "-", g, c, r,
				(k in mm) ? mm[k] : "-", (k in hm) ? hm[k] : "-", note[k]
		}
	}
' "$rows"
awk -F'\t' '($1 == "camera ring" || $1 == "ring, waiting") && $3 == "cycle" && $5 + 0 > 0 {
	how = $1 == "camera ring" ? "reads behind fences" : "each read waited for"
	printf "%s: %.0f frames/s (16 cameras of 640x480 a cycle, %s cycles/s on the %s backend, %s)\n", $1, 16 * $5, $5, $4, how
}' "$rows"

# The compute caster (sensors/gpucast): its tests (every distance bit for bit
# the CPU caster's) and its benchmark, run from its package directory (the
# test binary reads ../../scenes/marvin).
if [ -x "$GPUCAST" ]; then
	g=$(cd "$(dirname "$GPUCAST")" && pwd)/$(basename "$GPUCAST")
	echo
	echo "compute caster (sensors/gpucast): tests, then one cycle per op (cpu-ms/cycle: all threads)"
	(cd sensors/gpucast && timeout "$TIMEOUT" "$g" -test.count 1 -test.v 2>&1 |
		grep -E '^(--- FAIL|FAIL|PASS|ok|panic)|New divides|differ' | head -30)
	(cd sensors/gpucast && timeout "$TIMEOUT" "$g" -test.run '^$' -test.bench Cycle -test.benchtime "${SECS}s" 2>&1 |
		grep -E '^(Benchmark|FAIL|panic)' || echo "gpucast benchmark: no result (timeout or failure)")
else
	echo
	echo "compute caster: no test binary at $GPUCAST (go test -c -o bin/gpucast.test ./sensors/gpucast)"
fi
