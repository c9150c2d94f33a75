// `node --import ./test/support/hide-packages.mjs`: makes the installed packages named in HIDDEN_PACKAGES
// (comma-separated) unresolvable, as if they were not installed, to prove that optional peers stay optional.
import { register } from 'node:module';

const hidden = (process.env.HIDDEN_PACKAGES ?? '').split(',').filter(Boolean);
register('./hide-packages.hooks.mjs', import.meta.url, { data: { hidden } });
