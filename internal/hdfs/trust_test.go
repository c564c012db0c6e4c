package hdfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJudgeEntry(t *testing.T) {
	base := entryFacts{User: "bob", Owner: "alice",
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
		{"the superuser is trusted", with(func(e *entryFacts) { e.Owner, e.Trusted = "hdfs", true }), useAdmin, ""},
		{"a configured administrator is trusted", with(func(e *entryFacts) { e.Owner, e.Trusted = "ops", true }), useAdmin, ""},
		{"we as the directory's owner", with(func(e *entryFacts) { e.Owner, e.User = "bob", "bob" }), useOwn, ""},
		{"a wrong length is refused unread", with(func(e *entryFacts) { e.Size = 11 }), refuse, "it has 11 bytes where its name stands for 10"},
		{"a wrong length of ours too", with(func(e *entryFacts) { e.Owner, e.Size = "bob", 9 }), refuse, "it has 9 bytes where its name stands for 10"},
		{"a directory under an entry's name", with(func(e *entryFacts) { e.Regular = false }), refuse, "it is not a regular file"},
		{"another's entry, even closed to others", with(func(e *entryFacts) { e.OthersRead = false }), refuse, another},
		{"closed to others, even the admin's", with(func(e *entryFacts) { e.Owner, e.Trusted, e.OthersRead = "hdfs", true, false }), refuse, "it is not readable by others"},
		{"ours, writable by others", with(func(e *entryFacts) { e.Owner, e.Writable = "bob", true }), refuse, "others than its owner may write it"},
		{"the admin's, writable by others", with(func(e *entryFacts) { e.Owner, e.Trusted, e.Writable = "root", true, true }), refuse, "others than its owner may write it"},
		{"an unknown owner is no admin", with(func(e *entryFacts) { e.Owner, e.Trusted = "", true }), refuse, another},
		{"an unknown owner is not us either", with(func(e *entryFacts) { e.Owner, e.User = "", "" }), refuse, another},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, reason := judgeEntry(tc.facts)
			require.Equal(t, tc.want, v, "got %s", v)
			require.Equal(t, tc.reason, reason)
		})
	}
}

func TestJudgeDirs(t *testing.T) {
	rule := trustRule{User: "bob", SuperUser: "root", Admins: []string{"ops"}, AdminsFrom: "tfyarn.cache.trusted-owners in /etc/hadoop/core-site.xml"}
	good := []dirFacts{{"/", "root", 0o755}, {"/tmp", "root", 0o1777}, {"/tmp/cache", "ops", 0o1777}}
	with := func(i int, f func(*dirFacts)) []dirFacts {
		c := append([]dirFacts(nil), good...)
		f(&c[i])
		return c
	}
	const who = "mallory, who is neither the HDFS superuser (root) nor an administrator named in tfyarn.cache.trusted-owners in /etc/hadoop/core-site.xml"
	for _, tc := range []struct {
		name  string
		chain []dirFacts
		want  string
	}{
		{"an administrator's directory below sticky ones", good, ""},
		{"the superuser's", with(2, func(d *dirFacts) { d.Owner = "root" }), ""},
		{"our own", with(2, func(d *dirFacts) { d.Owner = "bob" }), ""},
		{"made first by another user", with(2, func(d *dirFacts) { d.Owner = "mallory" }),
			"it is owned by " + who + " (that owner could replace any entry)"},
		{"below another user's directory", with(1, func(d *dirFacts) { d.Owner, d.Perm = "mallory", 0o755 }),
			"/tmp above it is owned by " + who + " (that owner could rename what it holds)"},
		{"below a directory others may write, not sticky", with(1, func(d *dirFacts) { d.Perm = 0o777 }),
			"/tmp above it may be written by others than its owner and is not sticky (mode 0777): they could rename what it holds"},
		{"below one its group may write", with(1, func(d *dirFacts) { d.Perm = 0o775 }),
			"/tmp above it may be written by others than its owner and is not sticky (mode 0775): they could rename what it holds"},
		{"an unknown owner", with(2, func(d *dirFacts) { d.Owner = "" }),
			"it is owned by an unknown user, who is neither the HDFS superuser (root) nor an administrator named in tfyarn.cache.trusted-owners in /etc/hadoop/core-site.xml (that owner could replace any entry)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, judgeDirs(rule, tc.chain))
		})
	}
	require.Equal(t, "root (the HDFS superuser) and ops (tfyarn.cache.trusted-owners in /etc/hadoop/core-site.xml)", rule.whom())
	require.Equal(t, "root (the HDFS superuser)", trustRule{SuperUser: "root", Admins: []string{"root"}}.whom())
	require.False(t, trustRule{User: "bob", SuperUser: "root"}.trusts("ops"), "no one configured")
}
