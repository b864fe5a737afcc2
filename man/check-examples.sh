#!/bin/sh
# check-examples.sh: the manual and README.md cannot drift from the code.
#
# For every page under man/ and for README.md:
#  - each example marked as man/local.mk describes is extracted, compiled
#    with the project's warning flags, linked against the built libvmon and,
#    when marked "run", run: it must exit 0 within $VMON_EX_TIMEOUT seconds;
#  - every function the built library exports has a page man/NAME.3 (its own
#    or a .so alias), and every section 3 page that is not an alias has at
#    least one example;
#  - every want of defs/*_wants.def is named in vmon_init(3), which lists what
#    vmon_init() takes, and in vmon(3), which says what each one fills;
#  - every page, the generated vmon_fields(7) included, renders through
#    groff -mdoc -ww -z without a warning, passes mandoc -T lint (style
#    included, but for manuals this machine does not have), and reads, as
#    either renders it, without quotes nested by mistake (an mdoc enclosure
#    runs to the end of its line: ".Pq Dq a , Dq b" gave "(“a, “b””)");
#    each tool skipped, with a reason, when it is not installed.
# Run by make check (man/local.mk passes the compiler and flags in VMON_EX_*).
set -u

srcdir=${srcdir:-.}
builddir=$(pwd)
work=$builddir/man/examples.d
timeout_secs=${VMON_EX_TIMEOUT:-60}
CC=${VMON_EX_CC:-cc}
CFLAGS=${VMON_EX_CFLAGS:-}
CPPFLAGS=${VMON_EX_CPPFLAGS:--I$srcdir/libvmon -I$srcdir}
LDFLAGS=${VMON_EX_LDFLAGS:-}
LIBTOOL=${LIBTOOL:-$builddir/libtool}
libvmon_la=$builddir/libvmon/libvmon.la
failures=0
checked=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

rm -rf "$work"
mkdir -p "$work" || exit 99

# A page whose first line that is not a comment is ".so other" is an alias.
is_alias() {
	sed -n '/^\.\\"/d; /^\.so /{p;q}; q' "$1" | grep -q .
}

# extract FILE FORMAT PREFIX: write PREFIX-N.c and PREFIX-N.mode per example
extract() {
	awk -v format="$2" -v prefix="$3" '
	function open_example(mode) {
		n++
		out = prefix "-" n ".c"
		printf "%s\n", mode > (prefix "-" n ".mode")
		close(prefix "-" n ".mode")
		printf "" > out
		inside = 1
	}
	format == "mdoc" && /^\.\\" example: (run|compile)[ \t]*$/ {
		pending = $3
		next
	}
	format == "mdoc" && pending != "" && !inside && /^\.Bd -literal/ {
		open_example(pending)
		pending = ""
		next
	}
	format == "mdoc" && inside && /^\.Ed/ {
		close(out)
		inside = 0
		next
	}
	format == "markdown" && /^<!-- example: (run|compile) -->[ \t]*$/ {
		pending = $3
		next
	}
	format == "markdown" && pending != "" && !inside && /^```c[ \t]*$/ {
		open_example(pending)
		pending = ""
		next
	}
	format == "markdown" && inside && /^```[ \t]*$/ {
		close(out)
		inside = 0
		next
	}
	inside {
		line = $0
		if (format == "mdoc") {
			# mdoc literal text back to C: \& vanishes, \(aq \(dq \(ga \- are
			# characters, and \e (done last) is a backslash
			gsub(/\\&/, "", line)
			gsub(/\\\(aq/, "\047", line)
			gsub(/\\\(dq/, "\"", line)
			gsub(/\\\(ga/, "`", line)
			gsub(/\\-/, "-", line)
			gsub(/\\e/, "\\", line)
		}
		print line > out
	}
	END {
		if (inside)
			printf "%s: an example is not closed\n", FILENAME > "/dev/stderr"
		if (pending != "")
			printf "%s: an example marker is not followed by a code block\n", FILENAME > "/dev/stderr"
		if (inside || pending != "")
			exit 1
	}' "$1"
}

build_and_run() {	# $1: the example .c, $2: where it came from
	base=${1%.c}
	mode=$(cat "$base.mode")
	checked=$((checked + 1))
	# shellcheck disable=SC2086 # the flags are lists of words
	if ! $CC $CPPFLAGS $CFLAGS -c -o "$base.o" "$1" >"$base.log" 2>&1; then
		fail "$2: does not compile"; cat "$base.log"; return
	fi
	# shellcheck disable=SC2086
	if ! $LIBTOOL --mode=link --silent $CC $CFLAGS $LDFLAGS -no-install -o "$base" "$base.o" "$libvmon_la" \
	     >>"$base.log" 2>&1; then
		fail "$2: does not link"; cat "$base.log"; return
	fi
	if [ "$mode" = run ]; then
		if ! (cd "$work" && timeout "$timeout_secs" "$base" >"$base.out" 2>&1); then
			fail "$2: exits with an error"; cat "$base.out"; return
		fi
		echo "PASS: $2 (compiled, ran: $(wc -l <"$base.out") lines of output)"
	else
		echo "PASS: $2 (compiled)"
	fi
}

# every page: its examples, the convention that function pages have one
for page in "$srcdir"/man/*.[1-9]; do
	[ -f "$page" ] || continue
	name=$(basename "$page")
	is_alias "$page" && continue
	if ! extract "$page" mdoc "$work/$name"; then
		fail "$name: malformed example markers"
		continue
	fi
	nr=0
	for ex in "$work/$name"-*.c; do
		[ -f "$ex" ] || continue
		nr=$((nr + 1))
		build_and_run "$ex" "$name example $nr"
	done
	case $name in
	*.3) [ "$nr" -gt 0 ] || fail "$name: a function page without an example (see man/local.mk)" ;;
	esac
done

if ! extract "$srcdir/README.md" markdown "$work/README"; then
	fail "README.md: malformed example markers"
fi
nr=0
for ex in "$work"/README-*.c; do
	[ -f "$ex" ] || continue
	nr=$((nr + 1))
	build_and_run "$ex" "README.md example $nr"
done
[ "$nr" -gt 0 ] || fail "README.md: no example (the API in brief must have one)"

# every exported function has a page
lib=
for f in "$builddir/libvmon/.libs/libvmon.so" "$builddir/libvmon/.libs/libvmon.a"; do
	[ -f "$f" ] && { lib=$f; break; }
done
if [ -z "$lib" ]; then
	fail "no built libvmon under $builddir/libvmon/.libs"
else
	case $lib in *.so) nmflags=-D ;; *) nmflags=-g ;; esac
	for fn in $(nm $nmflags --defined-only "$lib" | awk '$2 == "T" && $3 ~ /^vmon_/ { print $3 }' | sort -u); do
		[ -f "$srcdir/man/$fn.3" ] || fail "$fn: exported, but there is no man/$fn.3"
	done
fi

# every want is listed where a caller looks for the wants
for def in "$srcdir"/defs/*_wants.def; do
	for want in $(sed -n 's/^vmon_want(\([A-Z_]*\),.*/\1/p' "$def"); do
		for page in vmon_init.3 vmon.3; do
			grep -q "VMON_WANT_$want\b" "$srcdir/man/$page" ||
				fail "$page: VMON_WANT_$want (defs/$(basename "$def")) is not listed"
		done
	done
done

# the quotes of a rendered page (on stdin, bold and underline as overstrikes) that open again before
# they close, or close empty
misquoted() {
	LC_ALL=C.UTF-8 python3 -c '
import re, sys
text = re.sub(".\b", "", sys.stdin.buffer.read().decode("utf-8", "replace"))
bad = re.compile("\u201c[^\u201d]*\u201c|\u201d[^\u201c]*\u201d|\u2018[^\u2019]*\u2018|\u2019[^\u2018]*\u2019|\u2018\u2019|\u201c\u201d")
for line in text.splitlines():
    if bad.search(line):
        print("  " + line.strip())
'
}

# every page renders without a warning, lints clean, and quotes what it means to
have_groff=false have_mandoc=false have_python=false
command -v groff >/dev/null 2>&1 && have_groff=true
command -v mandoc >/dev/null 2>&1 && have_mandoc=true
command -v python3 >/dev/null 2>&1 && have_python=true
$have_groff || echo "NOTE: groff not found (apt-get install groff-base): the pages are not rendered by groff"
$have_mandoc || echo "NOTE: mandoc not found (apt-get install mandoc): the pages are not linted"
$have_python || echo "NOTE: python3 not found: the rendered quotes are not checked"
linted=
for page in "$srcdir"/man/*.[1-9] "$builddir"/man/*.[1-9]; do
	[ -f "$page" ] || continue
	# an in-tree build lists its pages twice
	case " $linted " in *" $(basename "$page") "*) continue ;; esac
	linted="$linted $(basename "$page")"
	is_alias "$page" && continue
	name=$(basename "$page")
	if $have_groff; then
		warnings=$(groff -mdoc -ww -z "$page" 2>&1)
		[ -z "$warnings" ] || { fail "$name: groff warns"; echo "$warnings"; }
		if $have_python; then
			quotes=$(groff -mdoc -Tutf8 -P-c "$page" 2>/dev/null | misquoted)
			[ -z "$quotes" ] || { fail "$name: quotes nested by mistake (groff)"; echo "$quotes"; }
		fi
	fi
	if $have_mandoc; then
		# which other manuals this machine has installed is no fault of the page
		lint=$(mandoc -T lint -W style "$page" 2>&1 | grep -v -e 'referenced manual not found' -e 'mandoc\.db')
		[ -z "$lint" ] || { fail "$name: mandoc -T lint"; echo "$lint"; }
		if $have_python; then
			quotes=$(mandoc -T utf8 "$page" 2>/dev/null | misquoted)
			[ -z "$quotes" ] || { fail "$name: quotes nested by mistake (mandoc)"; echo "$quotes"; }
		fi
	fi
done

echo "$checked examples checked, $failures failures"
[ "$failures" -eq 0 ]
