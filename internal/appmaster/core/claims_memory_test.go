package core

import (
	"os"
	"strings"
	"testing"
)

// TestClaimsNearMemoryREADME: README "A task whose peak reaches 90% of its
// container's memory is flagged".
func TestClaimsNearMemoryREADME(t *testing.T) {
	data, err := os.ReadFile("../../../docs/logs-and-ui.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(data)), " ")
	if !strings.Contains(readme, "A task whose peak reaches 90% of its container's memory is flagged") {
		t.Fatal("README no longer states the 90% mark")
	}
	if NearMemoryFraction != 0.9 {
		t.Fatalf("NearMemoryFraction %v, README says 90%%", NearMemoryFraction)
	}
}
