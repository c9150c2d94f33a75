// `node --import ./scripts/register-ts.js file.ts` runs TypeScript through scripts/ts-loader.js.
import { register } from 'node:module';

register('./ts-loader.js', import.meta.url);
