#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-snippets-only.sh [DIR]: the test docs.snippets_only.
#
# The pages in DIR (default: docs) may show code only through \snippet or
# \include of the real sources, so they cannot drift from the code. This fails
# when a page has
#   - a fenced block (``` or ~~~) labelled as anything but sh or text,
#     or not labelled at all (commands go in ```sh, program output in ```text);
#   - a \code or @code block;
#   - an indented line that looks like C (ends in ; { or }) outside a fence,
#     which Markdown would show as a code block;
#   - a bare \snippet: pages use the aliases of docs/Doxyfile.in
#     (\serversnippet, \clientsnippet, \sharedsnippet, \commonsnippet,
#     \programsnippet), which
#     write the file's name in the box's caption;
#   - a command that starts a server and sleeps before the client
#     ("& sleep"): scripts/lab pair waits for the server's listening line.
# Each problem is printed as FILE:LINE: what.
dir=${1:-docs}
status=0
found=0
for page in "$dir"/*.md; do
	[ -e "$page" ] || continue
	found=1
	awk -v page="$page" '
		function bad(what) {
			printf "%s:%d: %s: %s\n", page, NR, what, $0
			failed = 1
		}
		/^[ \t]*(```|~~~)/ {
			if (fence) {
				fence = 0
				next
			}
			fence = 1
			label = $0
			sub(/^[ \t]*(```+|~~~+)[ \t]*/, "", label)
			gsub(/[{}. \t]/, "", label)
			if (label != "sh" && label != "text")
				bad("fenced block not labelled sh or text (show code with \\snippet)")
			next
		}
		/&[ \t]*sleep[ \t]/ { bad("server started with a sleep (use scripts/lab pair)") }
		fence { next }
		/(^|[^\\])[\\@]code([^a-z]|$)/ { bad("\\code block (show code with \\snippet)") }
		/(^|[^\\])[\\@]snippet([^a-z]|$)/ { bad("bare \\snippet (use \\serversnippet, \\clientsnippet, \\sharedsnippet, \\commonsnippet or \\programsnippet)") }
		/^(    |\t)/ && /[;{}][ \t]*$/ { bad("indented C-like line (show code with \\snippet)") }
		END {
			if (fence) {
				printf "%s: a fenced block is not closed\n", page
				failed = 1
			}
			exit failed
		}
	' "$page" || status=1
done
if [ "$found" = 0 ]; then
	echo "no pages (*.md) in $dir"
	exit 1
fi
[ "$status" = 0 ] && echo "ok: the pages in $dir show code only through captioned snippets"
exit $status
