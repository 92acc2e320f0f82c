// The npm scripts run TypeScript directly, which needs Node 24. This guard runs first in each
// of them and says so in one line, instead of an older Node failing with
// ERR_UNKNOWN_FILE_EXTENSION. Plain CommonJS without newer syntax on purpose: it must run on
// whatever Node is found. It is inlined in the scripts rather than a `pre` script because npm
// skips `pre` scripts when ignore-scripts is set, which is the usual way to end up here.
// `node infra/needs-node-24.cjs VERSION` checks VERSION instead of this Node (for its test).
'use strict';

var version = process.argv[2] || process.versions.node;
var major = Number(String(version).replace(/^v/, '').split('.')[0]);

if (!(major >= 24)) {
  console.error(
    'ephemera needs Node 24 or later, but found Node ' + String(version).replace(/^v?/, 'v') +
      ' at ' + process.execPath + ': run `npm ci` with install scripts allowed' +
      ' (it puts Node 24 in node_modules/.bin), or install Node 24.',
  );
  process.exitCode = 1;
}
