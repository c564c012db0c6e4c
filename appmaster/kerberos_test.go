package appmaster

import (
	"bytes"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/security"
)

func TestRefreshWait(t *testing.T) {
	for _, tc := range []struct{ left, want time.Duration }{
		{20 * time.Second, 15 * time.Second}, // the test cluster's renew interval
		{24 * time.Hour, 12 * time.Hour},     // Hadoop's default: capped
		{2 * time.Second, 5 * time.Second},   // never busy-loops
		{-time.Minute, 5 * time.Second},      // already expired: soon, not now
		{8 * time.Hour, 6 * time.Hour},
	} {
		if got := refreshWait(tc.left); got != tc.want {
			t.Errorf("refreshWait(%s) = %s, want %s", tc.left, got, tc.want)
		}
	}
}

// Fresh tokens replace the ones under the same alias (the service, as the
// client stored them); the AMRMToken and other tokens stay for the AM, and
// what tasks get never holds the AMRMToken.
func TestReplaceTokens(t *testing.T) {
	creds := security.NewCredentials()
	creds.AddToken("127.0.0.1:8020", security.Token{Identifier: []byte("old"), Password: []byte("p"), Kind: security.KindHDFSDelegation, Service: "127.0.0.1:8020"})
	creds.AddToken("amrm", security.Token{Identifier: []byte("am"), Password: []byte("p"), Kind: security.KindAMRMToken})
	s := &amSecurity{creds: creds}
	fresh := security.Token{Identifier: []byte("new"), Password: []byte("q"), Kind: security.KindHDFSDelegation, Service: "127.0.0.1:8020"}
	next := s.replaceTokens([]security.Token{fresh})
	got, ok := next.Token("127.0.0.1:8020")
	if !ok || string(got.Identifier) != "new" {
		t.Fatalf("HDFS token after refresh = %v, %v", got, ok)
	}
	if _, ok := next.Token("amrm"); !ok {
		t.Error("the AM lost its AMRMToken")
	}
	if old, _ := creds.Token("127.0.0.1:8020"); string(old.Identifier) != "old" {
		t.Error("replaceTokens modified the credentials it was given")
	}
	task, err := security.ReadCredentials(bytes.NewReader(s.taskTokens([]byte("0123456789abcdef0123456789abcdef"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(task.TokensOfKind(security.KindAMRMToken)) != 0 {
		t.Error("task credentials hold the AMRMToken")
	}
	if tok, ok := task.Token("127.0.0.1:8020"); !ok || string(tok.Identifier) != "new" {
		t.Errorf("task credentials hold %v, want the fresh token", tok)
	}
}
