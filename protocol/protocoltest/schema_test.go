package protocoltest

import "testing"

// TestTheOfficialSchemasAreHere is the one place that says when the
// checks against the official schemas are skipped, and why.
func TestTheOfficialSchemasAreHere(t *testing.T) {
	if Dir() != "" {
		return
	}
	if Required() {
		t.Fatal(errMissing)
	}
	t.Skip("the official MCP schemas are missing, so messages are checked only for being JSON; every other test runs. " +
		"They come from ../shared/mcp-schema beside the project (the project's shared folder, which CI provides); under CI (CI=true) their absence fails")
}
