// The one swc setting for running this repository's TypeScript, shared by Jest and scripts/ts-loader.js:
// legacy decorators with metadata, as Nest needs, emitted as ES modules.
export const swcOptions = {
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};
