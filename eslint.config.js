import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/.tmp/**'] },
  ...tseslint.configs.recommended,
  // lib/ is what users run: the type-checked rules catch unsafe `any` and promise misuse the plain ones miss
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({
    ...config,
    files: ['lib/**/*.ts'],
    ignores: ['**/*.spec.ts'],
  })),
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // typed rules: a promise nobody awaits is a lock released late or a rejection nobody handles
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['lib/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      // a store method or descriptor is async to meet a promise contract: a throw in it must reject, not throw
      '@typescript-eslint/require-await': 'off',
      // a caught value is passed on as it was caught: the user's own exception is never wrapped
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // the published typings must compile where ioredis (an optional peer) is not installed
    files: ['lib/**/*.ts'],
    ignores: ['**/*.spec.ts', 'lib/interfaces/ioredis-types.d.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'ioredis', message: 'Import its types from lib/interfaces/ioredis-types.js.' }] },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
