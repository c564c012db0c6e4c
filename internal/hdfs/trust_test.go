package hdfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJudgeEntry(t *testing.T) {
	base := entryFacts{User: "bob", Owner: "alice", DirOwner: "hdfs", SuperUser: "root",
		Regular: true, Size: 10, Want: 10, OthersRead: true}
	with := func(f func(*entryFacts)) entryFacts { e := base; f(&e); return e }
	const another = "another user's entry is never used (its owner can rewrite it at any time); the directory's owner can make it everyone's with tfyarn cache adopt"
	for _, tc := range []struct {
		name   string
		facts  entryFacts
		want   verdict
		reason string
	}{
		{"another user's entry is never used, whatever its content", base, refuse, another},
		{"ours is used as the per-user cache's", with(func(e *entryFacts) { e.Owner = "bob" }), useOwn, ""},
		{"ours even when closed to others", with(func(e *entryFacts) { e.Owner, e.OthersRead = "bob", false }), useOwn, ""},
		{"the directory's owner is trusted", with(func(e *entryFacts) { e.Owner = "hdfs" }), useAdmin, ""},
		{"the superuser is trusted", with(func(e *entryFacts) { e.Owner = "root" }), useAdmin, ""},
		{"we as the directory's owner", with(func(e *entryFacts) { e.Owner, e.User, e.DirOwner = "bob", "bob", "bob" }), useOwn, ""},
		{"a wrong length is refused unread", with(func(e *entryFacts) { e.Size = 11 }), refuse, "it has 11 bytes where its name stands for 10"},
		{"a wrong length of ours too", with(func(e *entryFacts) { e.Owner, e.Size = "bob", 9 }), refuse, "it has 9 bytes where its name stands for 10"},
		{"a directory under an entry's name", with(func(e *entryFacts) { e.Regular = false }), refuse, "it is not a regular file"},
		{"another's entry, even closed to others", with(func(e *entryFacts) { e.OthersRead = false }), refuse, another},
		{"closed to others, even the admin's", with(func(e *entryFacts) { e.Owner, e.OthersRead = "hdfs", false }), refuse, "it is not readable by others"},
		{"ours, writable by others", with(func(e *entryFacts) { e.Owner, e.Writable = "bob", true }), refuse, "others than its owner may write it"},
		{"the admin's, writable by others", with(func(e *entryFacts) { e.Owner, e.Writable = "root", true }), refuse, "others than its owner may write it"},
		{"an unknown owner is no admin", with(func(e *entryFacts) { e.Owner, e.DirOwner = "", "" }), refuse, another},
		{"an unknown owner is not us either", with(func(e *entryFacts) { e.Owner, e.User = "", "" }), refuse, another},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, reason := judgeEntry(tc.facts)
			require.Equal(t, tc.want, v, "got %s", v)
			require.Equal(t, tc.reason, reason)
		})
	}
}
