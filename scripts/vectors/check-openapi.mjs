// Validates the faucet's OpenAPI document against the official OpenAPI 3.1
// JSON schema (npm @seriousme/openapi-schema-validator).
//
// Usage: npm install && npm run check-openapi   (or: node check-openapi.mjs FILE)
import { Validator } from '@seriousme/openapi-schema-validator';

const file = process.argv[2] ?? '../../lib/faucet/httpapi/openapi.json';
const validator = new Validator();
const res = await validator.validate(file);
if (!res.valid) {
  console.error(`${file}: not a valid OpenAPI document`);
  console.error(JSON.stringify(res.errors, null, 2));
  process.exit(1);
}
if (validator.version !== '3.1') {
  console.error(`${file}: OpenAPI version ${validator.version}, want 3.1`);
  process.exit(1);
}
// Every $ref must resolve.
validator.resolveRefs();
console.log(`${file}: valid OpenAPI ${validator.version}`);
