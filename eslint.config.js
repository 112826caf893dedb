// SPDX-License-Identifier: MIT
// ESLint (pinned in package.json) over the page, its server, the scripts and the JavaScript tests:
// the recommended rules, which catch undefined names, unused variables and unreachable code.
// scripts/check_format.sh runs it; any finding fails CI.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['build/', 'node_modules/'] },
  js.configs.recommended,
  {
    files: ['web/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...globals.browser } },
  },
  {
    files: ['web/sim-worker.js'],
    languageOptions: { globals: { ...globals.worker } },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: { ...globals.node } },
  },
  {
    // Playwright runs some of their functions in the page.
    files: ['tests/browser/**/*.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
];
