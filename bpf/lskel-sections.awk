# bpf/lskel-sections.awk: a light skeleton (bpftool gen skeleton -L) with its
# loader's data and instructions moved out of .rodata into a section of
# their own, vmon_bpf_loader, which libvmon gives back to the kernel once
# the load has read them (light_skel_drop_loaders(), util/light_skel.c).
#
# bpftool writes them as two string literals in NAME__load(), assigned to
# opts.data and opts.insns (tens of KB each: the loader is all of the
# programs' instructions, maps and relocations).  Left there they land in
# libvmon.so's .rodata among the constants the library reads all the time,
# and stay resident in every client.  Here they become the members of one
# static struct, NAME_loader, defined just before NAME__load(): its type is
# aligned to 64 KiB, so both its start and its size are whole 64 KiB
# windows (the kernel's fault-around maps a file's pages 64 KiB at a time
# around a fault, aligned: a constant read beside the blobs would map them
# back).  After bpf_load_and_run(), the load's one reader of them, the
# skeleton calls light_skel_drop_loaders().
#
# Anything else than the shape expected (both literals after their sizes,
# one load function, its call of bpf_load_and_run()) stops the build: a
# new bpftool's skeleton must be looked at, not compiled as it comes.

function fail(why)
{
	print FILENAME ": " why " (bpf/lskel-sections.awk)" > "/dev/stderr"
	failed = 1
	exit 1
}

# the bytes of a literal as bpftool writes them: each one \0 or \xNN; -1 if not that
function bytes(literal,    s, nr)
{
	s = literal
	gsub(/\\\n/, "", s)	# the lines' continuations
	nr = gsub(/\\x[0-9a-fA-F][0-9a-fA-F]/, "", s)
	nr += gsub(/\\0/, "", s)
	return s == "\"\"" ? nr : -1
}

BEGIN {
	n = 0
	in_blob = ""
}

# inside a literal: its lines go to the struct, not to the output
in_blob != "" {
	blob[in_blob] = blob[in_blob] "\n" $0
	if ($0 ~ /";$/) {
		sub(/;$/, "", blob[in_blob])
		in_blob = ""
	}
	next
}

/^#include <bpf\/skel_internal\.h>$/ {
	out[++n] = "#include \"util/light_skel.h\"\t/* light_skel_drop_loaders() (bpf/lskel-sections.awk) */"
	out[++n] = $0
	included = 1
	next
}

/^[A-Za-z_][A-Za-z_0-9]*__load\(/ {
	if (name != "")
		fail("more than one load function")
	name = $0
	sub(/__load\(.*/, "", name)
	load_at = n	# the line before, "static inline int", is out[n]
	out[++n] = $0
	next
}

/^\topts\.(data|insns)_sz = [0-9]+;$/ {
	what = $1
	sub(/^opts\./, "", what)
	sub(/_sz$/, "", what)
	size[what] = $3
	sub(/;$/, "", size[what])
	out[++n] = $0
	next
}

/^\topts\.(data|insns) = \(void \*\)"\\$/ {
	what = $1
	sub(/^opts\./, "", what)
	if (name == "" || !(what in size) || (what in blob))
		fail("opts." what " not where expected")
	in_blob = what
	blob[what] = "\"\\"
	out[++n] = "\topts." what " = " name "_loader." what ";"
	next
}

/^\terr = bpf_load_and_run\(&opts\);$/ {
	out[++n] = $0
	out[++n] = "\tlight_skel_drop_loaders();\t/* read: given back (bpf/lskel-sections.awk) */"
	dropped = 1
	next
}

{
	out[++n] = $0
}

END {
	if (failed)
		exit 1
	if (in_blob != "" || !("data" in blob) || !("insns" in blob) || !included || !dropped)
		fail("not the light skeleton expected")
	for (what in blob)
		if (bytes(blob[what]) != size[what])
			fail("opts." what " is not of opts." what "_sz bytes")
	for (i = 1; i <= n; i++) {
		if (i == load_at) {
			print "/* the loader's, read by " name "__load() alone (bpf/lskel-sections.awk) */"
			print "static const struct __attribute__((aligned(65536))) {"
			# + 1: the literal's terminating 0
			print "\tchar data[" size["data"] + 1 "];"
			print "\tchar insns[" size["insns"] + 1 "];"
			print "} " name "_loader __attribute__((section(\"vmon_bpf_loader\"))) = {"
			print "\t.data = " blob["data"] ","
			print "\t.insns = " blob["insns"] ","
			print "};"
			print ""
		}
		print out[i]
	}
}
