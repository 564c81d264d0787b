// src/api.d.ts is generated from the faucet's OpenAPI document and up to date with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generate, openapiPath, outPath } from '../scripts/gen-types.mjs';

test('src/api.d.ts is the OpenAPI document\'s types (npm run gen-types)', () => {
  const want = generate(JSON.parse(readFileSync(openapiPath, 'utf8')));
  assert.equal(readFileSync(outPath, 'utf8'), want, 'src/api.d.ts is stale: run npm run gen-types in sdk/typescript');
});

test('the declarations compile in a strict TypeScript agent (tsc)', async (t) => {
  const { execFileSync } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const tsc = new URL('../node_modules/typescript/bin/tsc', import.meta.url);
  if (!existsSync(tsc)) return t.skip('typescript is not installed (npm ci)');
  execFileSync(process.execPath, [tsc.pathname, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext',
    '--target', 'es2022', new URL('types/example.ts', import.meta.url).pathname], { stdio: 'pipe' });
});
