// Node module hooks that run the repository's TypeScript directly (sample app, demo, test child
// processes), compiled by swc with the same settings as Jest: legacy decorators with metadata.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transform } from '@swc/core';
import { swcOptions as options } from './swc-options.js';

// the sample imports the package by its name, as an application would; here that name is lib/
const packageEntry = new URL('../lib/index.ts', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'nestjs-lock') return nextResolve(packageEntry, context);
  // sources import './x.js' as compiled ESM does; before compilation the file is './x.ts'
  if (specifier.endsWith('.js') && (specifier.startsWith('.') || specifier.startsWith('file:')) && context.parentURL) {
    const candidate = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (candidate.protocol === 'file:' && existsSync(fileURLToPath(candidate))) {
      return nextResolve(candidate.href, context);
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const { source } = await nextLoad(url, { ...context, format: 'module' });
  const { code } = await transform(String(source), { ...options, filename: fileURLToPath(url) });
  return { format: 'module', source: code, shortCircuit: true };
}
