// Module resolution hooks for hide-packages.mjs.
let hidden = [];

export async function initialize(data) {
  hidden = data?.hidden ?? [];
}

export async function resolve(specifier, context, nextResolve) {
  if (hidden.some((name) => specifier === name || specifier.startsWith(`${name}/`))) {
    const error = new Error(`Cannot find package '${specifier}' (hidden by hide-packages.mjs)`);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return nextResolve(specifier, context);
}
