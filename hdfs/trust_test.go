package hdfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJudgeEntry(t *testing.T) {
	base := entryFacts{User: "bob", Owner: "alice", DirOwner: "hdfs", SuperUser: "root",
		Regular: true, Size: 10, Want: 10, OthersRead: true}
	with := func(f func(*entryFacts)) entryFacts { e := base; f(&e); return e }
	for _, tc := range []struct {
		name   string
		facts  entryFacts
		want   verdict
		reason string
	}{
		{"another user's entry is read first", base, mustVerify, ""},
		{"ours is used as the per-user cache's", with(func(e *entryFacts) { e.Owner = "bob" }), useOwn, ""},
		{"ours even when closed to others", with(func(e *entryFacts) { e.Owner, e.OthersRead = "bob", false }), useOwn, ""},
		{"the directory's owner is trusted", with(func(e *entryFacts) { e.Owner = "hdfs" }), useAdmin, ""},
		{"the superuser is trusted", with(func(e *entryFacts) { e.Owner = "root" }), useAdmin, ""},
		{"verified before and unchanged", with(func(e *entryFacts) { e.Remembered = true }), useRemembered, ""},
		{"a wrong length is refused unread", with(func(e *entryFacts) { e.Size = 11 }), refuse, "it has 11 bytes where its name stands for 10"},
		{"a wrong length of ours too", with(func(e *entryFacts) { e.Owner, e.Size = "bob", 9 }), refuse, "it has 9 bytes where its name stands for 10"},
		{"a remembered entry of the wrong length", with(func(e *entryFacts) { e.Remembered, e.Size = true, 0 }), refuse, "it has 0 bytes where its name stands for 10"},
		{"a directory under an entry's name", with(func(e *entryFacts) { e.Regular = false }), refuse, "it is not a regular file"},
		{"closed to others: neither YARN nor we can read it", with(func(e *entryFacts) { e.OthersRead = false }), refuse, "it is not readable by others"},
		{"closed to others, even the admin's", with(func(e *entryFacts) { e.Owner, e.OthersRead = "hdfs", false }), refuse, "it is not readable by others"},
		{"an unknown owner is no admin", with(func(e *entryFacts) { e.Owner, e.DirOwner = "", "" }), mustVerify, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, reason := judgeEntry(tc.facts)
			require.Equal(t, tc.want, v, "got %s", v)
			require.Equal(t, tc.reason, reason)
		})
	}
}
