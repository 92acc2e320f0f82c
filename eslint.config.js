// One lint config for the whole tree: type-aware rules where they catch real bugs
// (floating promises), plus small budgets that keep functions readable.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '**/.wrangler/**', 'dist/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-depth': ['error', 4],
      'max-params': ['error', 4],
      'max-lines-per-function': ['warn', { max: 80, skipBlankLines: true, skipComments: true }],
      complexity: ['warn', 20],
      // `import { z }` takes zod's whole namespace object, so a bundle keeps all of zod
      // (z.compile, the JSON Schema reader, ...): ~90 KiB more for a Lambda cold start to compile.
      // The namespace import lets esbuild keep only what is used.
      'no-restricted-syntax': ['error', {
        selector: "ImportDeclaration[source.value='zod'][importKind!='type'] > :matches(ImportSpecifier[imported.name='z'], ImportDefaultSpecifier)",
        message: "import * as z from 'zod' (a bundle then keeps only the zod that is used).",
      }],
    },
  },
  {
    // The Node version guard is plain CommonJS so that any Node can run it.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Tests: table-driven suites are long by nature.
    files: ['test/**/*.ts'],
    rules: {
      'max-lines-per-function': 'off',
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      // node:test's describe/test return promises the runner awaits itself.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['describe', 'test', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] }],
      }],
    },
  },
);
