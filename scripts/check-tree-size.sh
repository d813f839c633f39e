#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The working tree without .git stays small (a clone, and the copy that travels to a GPU machine,
# pay for every byte): fails above the limit, printing the largest paths. Counts what git would
# carry (tracked files and untracked ones it does not ignore), so build folders do not count;
# outside a git checkout, every file but .git and build/.
#   check-tree-size.sh [--limit BYTES] [DIR]     (default limit 10000000 bytes, 10 MB)
set -euo pipefail
limit=10000000
if [ "${1:-}" = "--limit" ]; then limit=$2; shift 2; fi
root=${1:-$(dirname "$0")/..}
cd "$root"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files -z --cached --others --exclude-standard; }
else
  list() { find . \( -name .git -o -name build \) -prune -o -type f -printf '%P\0'; }
fi
# size and path of every file that exists (a deleted but still tracked file is skipped)
sizes=$(list | xargs -0 -r stat -c '%s %n' 2>/dev/null || true)
total=$(awk '{s += $1} END {print s + 0}' <<<"$sizes")
files=$(grep -c . <<<"$sizes" || true)
if [ "$total" -le "$limit" ]; then
  echo "tree: $total bytes in $files files, within the limit of $limit"
  exit 0
fi
echo "tree: $total bytes in $files files, above the limit of $limit bytes by $((total - limit))"
echo "largest folders (two levels):"
awk '{p = substr($0, index($0, " ") + 1); n = split(p, a, "/"); d = (n > 2) ? a[1] "/" a[2] : (n == 2 ? a[1] : "."); s[d] += $1}
     END {for (d in s) printf "%12d  %s\n", s[d], d}' <<<"$sizes" | sort -rn | head -10
echo "largest files:"
sort -rn <<<"$sizes" | head -10 | awk '{printf "%12d  %s\n", $1, substr($0, index($0, " ") + 1)}'
exit 1
