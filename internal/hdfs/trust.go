package hdfs

import "fmt"

// entryFacts is what a shared cache entry's status says, gathered before
// deciding whether to use it (judgeEntry).
type entryFacts struct {
	User  string // who we are
	Owner string // the entry's owner
	// Trusted: the owner is the HDFS superuser (the owner of /) or an
	// administrator the configuration names (tfyarn.cache.trusted-owners);
	// the directory's owner is one of them, or us.
	Trusted bool
	Regular bool  // a file, not a directory or anything else
	Size    int64 // the entry's length
	Want    int64 // the length of the content its name stands for
	// OthersRead: readable by every user, which YARN wants of a PUBLIC
	// resource.
	OthersRead bool
	// Writable: its group or others may write it (mode 0020 or 0002; with
	// an ACL the group bits are its mask, so this covers named entries too).
	Writable bool
}

// verdict is what to do with a shared cache entry.
type verdict int

const (
	// useOwn: we put it there; as trusted as the per-user cache.
	useOwn verdict = iota + 1
	// useAdmin: the superuser or a configured administrator put it there
	// (or adopted it: SharedCache.Adopt). The directory's owner, one of
	// them, can replace any entry at any time anyway.
	useAdmin
	// refuse: not usable whatever its content; ours goes elsewhere.
	refuse
)

func (v verdict) String() string {
	switch v {
	case useOwn:
		return "own"
	case useAdmin:
		return "admin's"
	case refuse:
		return "refuse"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// judgeEntry decides, from its status alone, whether a shared cache entry
// is used or refused (reason then says why, for the user).
//
// The rule: what our job runs must never be changeable, after we decided
// to use it, by anyone but us, the superuser or an administrator the
// configuration names (the directory's owner is one of those: an untrusted
// directory is not used at all, OpenSharedCache). So only entries owned by
// one of those are used, and none that its group or others may write.
// Another user's entry is never used, not even after reading it and
// checking its sha256: its owner may rewrite it in place at any time
// (truncate, append, then set the modification time back; the length,
// owner and file id stay the same, and YARN's localizer compares only the
// modification time), so a check proves nothing about what a NodeManager
// downloads later. Such an entry becomes usable by everyone when the
// directory's owner or the superuser adopts it (SharedCache.Adopt: a
// verified copy in the adopter's name). A wrong length is refused without
// reading: the content cannot be the one named.
func judgeEntry(f entryFacts) (v verdict, reason string) {
	switch {
	case !f.Regular:
		return refuse, "it is not a regular file"
	case f.Size != f.Want:
		return refuse, fmt.Sprintf("it has %d bytes where its name stands for %d", f.Size, f.Want)
	case f.Writable:
		return refuse, "others than its owner may write it"
	case f.Owner != "" && f.Owner == f.User:
		return useOwn, ""
	case f.Owner == "" || !f.Trusted:
		return refuse, "another user's entry is never used (its owner can rewrite it at any time); the directory's owner can make it everyone's with tfyarn cache adopt"
	case !f.OthersRead:
		return refuse, "it is not readable by others"
	}
	return useAdmin, ""
}
