#!/usr/bin/env bash
# Re-fetches the report's front-end libraries from the npm registry at the versions pinned in
# third_party/report-libs/package.json (npm install writes package-lock.json), then copies their
# distribution files next to it. Needs npm and the registry; the build itself never does.
set -euo pipefail
dir="$(cd "$(dirname "$0")/../third_party/report-libs" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$dir/package.json" "$work/"
[ -f "$dir/package-lock.json" ] && cp "$dir/package-lock.json" "$work/"
(cd "$work" && npm install --no-audit --no-fund --save-exact >/dev/null)
cp "$work/package-lock.json" "$dir/"
cp "$work/node_modules/tabulator-tables/dist/js/tabulator.min.js" \
   "$work/node_modules/tabulator-tables/dist/css/tabulator_simple.min.css" \
   "$work/node_modules/chart.js/dist/chart.umd.min.js" "$dir/"
cp "$work/node_modules/tabulator-tables/LICENSE" "$dir/LICENSE.tabulator"
cp "$work/node_modules/chart.js/LICENSE.md" "$dir/LICENSE.chart.js.md"
echo "updated $(ls "$dir")"
