# Sourced by the bench scripts (bash): where the checkout and its build are, a scratch directory
# removed on exit, and the steps every comparison starts with.
#
#   here   the folder of the script that sources this file
#   root   the checkout

here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# use_build PRESET [PROGRAM...]: BUILD, unless set, is build/PRESET of this checkout; each
# PROGRAM must be in $BUILD/bin, or the script stops saying how to build it.
use_build() {
  local preset=$1 program
  shift
  BUILD=${BUILD:-$root/build/$preset}
  for program in "$@"; do
    if [ ! -x "$BUILD/bin/$program" ]; then
      echo "error: $BUILD/bin/$program not found; build first (cmake --preset $preset &&" \
        "cmake --build --preset $preset) or set BUILD=<build dir>" >&2
      exit 1
    fi
  done
}

# scratch_dir [PARENT]: makes $work, a fresh directory in PARENT (default $TMPDIR or /tmp) that
# goes, with everything in it, when the script exits.
scratch_dir() {
  work=$(mktemp -d "${1:-${TMPDIR:-/tmp}}/gpufeed-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}

# step TEXT...: what the script does next, on stderr.
step() { echo "-- $*" >&2; }

# load_average: the 1, 5 and 15 minute load averages ("0.52 0.61 0.70").
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

# pack_photos H5PACK DIR COUNT [FORMAT]: COUNT photo-like images (jpeg, png or webp) in class
# folders under DIR (make_photos.py says so in one line on stdout), packed by H5PACK into the
# jpeg layout at DIR.h5.
pack_photos() {
  /usr/bin/python3 "$root/bench/jpeg/make_photos.py" "$2" --count "$3" --format "${4:-jpeg}"
  "$1" convert "$2" "$2.h5" --from imagefolder --store jpeg >/dev/null
}

# parse_options NAME... -- ARG...: each "--NAME VALUE" among the ARGs sets the variable NAME
# (dashes as underscores: --latency-ms 20 sets latency_ms), whose default the script set before;
# -h/--help prints the script's header comment; anything else is an error. Then $out, when set,
# is made absolute.
parse_options() {
  local names=() name option
  while [ "$1" != "--" ]; do
    names+=("$1")
    shift
  done
  shift
  while [ $# -gt 0 ]; do
    option=$1
    case $option in
      -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    esac
    name=${option#--}
    name=${name//-/_}
    if [ "$option" = "${option#--}" ] || [[ " ${names[*]} " != *" $name "* ]] || [ $# -lt 2 ]; then
      echo "error: unknown argument $option (see --help)" >&2
      exit 2
    fi
    printf -v "$name" '%s' "$2"
    shift 2
  done
  if [ -n "${out:-}" ]; then out=$(realpath -m "$out"); fi
}
