// Lint settings: typescript-eslint strict and stylistic, type-aware for TypeScript; prettier owns formatting.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'schema/', 'test/fixtures/clients/'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Numbers, booleans and null/undefined read fine in messages and URIs; objects ("[object Object]") stay flagged.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true, allowNullish: true }],
      // With noUncheckedIndexedAccess, `xs[i]!` after a bounds check is the house idiom; the `!` marks the spot.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // TypeScript already rejects reading a void value; `return json(res, …)` is the early exit of async handlers, which no option exempts.
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // A `_` name or a rest sibling is how a field is dropped on purpose (`const { id: _id, ...rest } = m`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // `async` without `await` implements a Promise-returning contract (Transport.start/close) so a throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // Passing on a caught `unknown` unchanged is fine; a made-up non-Error reason is still flagged.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // `!x || x.f !== y` spells the missing case out; `x?.f !== y` silently flips when y can be undefined.
      '@typescript-eslint/prefer-optional-chain': 'off',
      // `||` over boolean flags means "any of them is set"; `??` would stop at the first `false`.
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { boolean: true } }],
      // An empty body is an intended no-op (a Transport's start, a swallowed close); the name says so.
      '@typescript-eslint/no-empty-function': 'off',
      // `this: void` marks a method that is safe to pass unbound (`onRemove: coherence.release`).
      '@typescript-eslint/no-invalid-void-type': ['error', { allowAsThisParameter: true }],
      // The URI and log sanitisers match control characters on purpose.
      'no-control-regex': 'off',
      // Deleting listed keys from a private copy is how envelope fields are stripped.
      '@typescript-eslint/no-dynamic-delete': 'off',
      '@typescript-eslint/no-deprecated': [
        'error',
        {
          // The low-level `Server` is deprecated only in favour of McpServer's high-level API; a proxy needs the low-level one.
          allow: [
            { from: 'package', package: '@modelcontextprotocol/server', name: 'Server' },
            { from: 'package', package: '@modelcontextprotocol/sdk', name: 'Server' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // vitest's asymmetric matchers (`expect.any`, `expect.stringContaining`) are typed `any` by vitest itself.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // Tests parse JSON and import the untyped .mjs scripts; the assertions check the shape, not the types.
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // Teardown guards (`await g?.close()`) cover a setup that threw before the `let` was assigned: the types cannot know.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // A rejection handler in a test knows the error shape it asserts on.
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'off',
      // `String(result.stderr)` keeps the read explicit whatever stdio options execa was given.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
    },
  },
  {
    // Plain scripts (bench, scripts, this file) have no type information: lint them without it.
    files: ['**/*.mjs', '**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  prettier,
);
