#!/bin/sh
# kdoc-check.sh KERNEL_DOC FILE.c... - every non-static function of the
# driver has a kernel-doc comment, and kernel-doc -Wall finds nothing to
# say about any comment (parameters, return values, format).  Prints the
# problems; exit status 1 if there are any.
set -u
kdoc=$1
shift
bad=0
for f in "$@"; do
	# a definition at column 0 that is not static: its comment must open with /**
	awk -v F="$f" '
		/^\/\*\*/ { doc = 1 }
		/^\/\*($|[^*])/ { doc = 0 }
		/^}/ { doc = 0 }
		/^[a-z_][a-z_0-9 *]*[ *][a-z_][a-z_0-9]*\(/ && !/^static/ && !/;$/ &&
		    !/^(MODULE_|module_|EXPORT_|DEFINE_|IPU_STAT_|TRACE_)/ {
			if (!(doc && prev ~ /^ \*\/$/)) { printf "%s:%d: no kernel-doc: %s\n", F, NR, $0; bad = 1 }
		}
		{ prev = $0 }
		END { exit bad }' "$f" || bad=1
done
out=$("$kdoc" -none -Wall "$@" 2>&1)
if [ -n "$out" ]; then
	echo "$out"
	bad=1
fi
exit $bad
