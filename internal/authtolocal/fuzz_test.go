package authtolocal

import (
	"strings"
	"testing"
	"time"
)

// FuzzRules: parsing any rules text and mapping any name with them returns
// (never panics, never hangs), and a hadoop-mechanism result of a
// principal with a realm or host never holds '/' or '@'.
func FuzzRules(f *testing.F) {
	for _, c := range goldenCases {
		f.Add(c.Rules, c.Principal, c.mechanism() == "mit")
	}
	f.Fuzz(func(t *testing.T, rules, name string, mit bool) {
		if len(rules) > 2048 || len(name) > 256 {
			return
		}
		mech := MechanismHadoop
		if mit {
			mech = MechanismMIT
		}
		done := make(chan struct{})
		var got string
		var mapErr error
		var r *Rules
		go func() {
			defer close(done)
			var err error
			if r, err = Parse(rules, mech); err != nil {
				return
			}
			_ = r.String()
			got, mapErr = r.Map(name, "EXAMPLE.COM")
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse/Map of rules %q, name %q did not return within 10s", rules, name)
		}
		if r == nil || mapErr != nil {
			return
		}
		if p, ok := splitPrincipal(name); ok && (p.hasHost || p.hasRealm) && !mit && strings.ContainsAny(got, "/@") {
			t.Fatalf("rules %q map %q to %q under the hadoop mechanism", rules, name, got)
		}
	})
}
