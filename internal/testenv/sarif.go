package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// jestSarif is Microsoft's @microsoft/jest-sarif from npm: it ships the
// SARIF 2.1.0 JSON schema (sarif-2.1.0-rtm.5.json) and ajv to check it.
const jestSarif = "@microsoft/jest-sarif@1.0.0-beta.0"

const validateJS = `const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const Ajv = require(path.join(dir, 'node_modules', 'ajv'));
const schema = require(path.join(dir, 'node_modules', '@microsoft', 'jest-sarif', 'lib', 'schemas', 'sarif-2.1.0-rtm.5.json'));
const ajv = new Ajv({ allErrors: true, jsonPointers: true, schemaId: 'auto' });
// The schema is JSON Schema draft-04, whose meta-schema ajv 6 ships.
ajv.addMetaSchema(require(path.join(dir, 'node_modules', 'ajv', 'lib', 'refs', 'json-schema-draft-04.json')));
const log = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
if (!ajv.validate(schema, log)) {
  console.log(JSON.stringify(ajv.errors, null, 2));
  process.exit(1);
}
console.log('valid SARIF 2.1.0');
`

// ValidateSARIF checks a SARIF log against the SARIF 2.1.0 JSON schema,
// installing the validator into the user's cache on first use. It
// returns the schema errors ("" when valid).
func ValidateSARIF(t testing.TB, path string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Unavailable(t, "node not installed: cannot run the SARIF schema validator")
	}
	dir := NPMTool(t, "jest-sarif", jestSarif)
	script := filepath.Join(t.TempDir(), "validate.js")
	os.WriteFile(script, []byte(validateJS), 0o644)
	out, err := exec.Command("node", script, dir, path).CombinedOutput()
	if err != nil {
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			return string(out)
		}
		t.Fatalf("running the SARIF validator: %v\n%s", err, out)
	}
	return ""
}
