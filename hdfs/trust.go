package hdfs

import "fmt"

// entryFacts is what a shared cache entry's status says, gathered before
// deciding whether to use it (judgeEntry).
type entryFacts struct {
	User      string // who we are
	Owner     string // the entry's owner
	DirOwner  string // the shared directory's owner (its administrator)
	SuperUser string // the HDFS superuser: the owner of /
	Regular   bool   // a file, not a directory or anything else
	Size      int64  // the entry's length
	Want      int64  // the length of the content its name stands for
	// OthersRead: readable by every user, which YARN wants of a PUBLIC
	// resource and we need to check it.
	OthersRead bool
	// Remembered: this path, with this length, modification time, owner
	// and file id, was verified by us before (VerifiedMemo).
	Remembered bool
}

// verdict is what to do with a shared cache entry.
type verdict int

const (
	// useOwn: we put it there; as trusted as the per-user cache.
	useOwn verdict = iota + 1
	// useAdmin: the directory's owner or the superuser put it there; both
	// can replace any entry of the directory anyway, so reading it proves
	// nothing that lasts.
	useAdmin
	// useRemembered: another user's entry we verified earlier, unchanged.
	useRemembered
	// mustVerify: another user's entry: read it, hash it, compare with its
	// name before use.
	mustVerify
	// refuse: not usable whatever its content; ours goes elsewhere.
	refuse
)

func (v verdict) String() string {
	switch v {
	case useOwn:
		return "own"
	case useAdmin:
		return "admin's"
	case useRemembered:
		return "verified before"
	case mustVerify:
		return "verify"
	case refuse:
		return "refuse"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// judgeEntry decides, from its status alone, whether a shared cache entry
// is used as it is, read and verified first, or refused (reason then says
// why, for the user). A wrong length is refused without reading: the
// content cannot be the one named. An entry of ours is used as the
// per-user cache's are; another user's must be readable by all (YARN
// localizes it PUBLIC, and we must read it to verify it).
func judgeEntry(f entryFacts) (v verdict, reason string) {
	switch {
	case !f.Regular:
		return refuse, "it is not a regular file"
	case f.Size != f.Want:
		return refuse, fmt.Sprintf("it has %d bytes where its name stands for %d", f.Size, f.Want)
	case f.Owner == f.User:
		return useOwn, ""
	case !f.OthersRead:
		return refuse, "it is not readable by others"
	case f.Owner != "" && (f.Owner == f.DirOwner || f.Owner == f.SuperUser):
		return useAdmin, ""
	case f.Remembered:
		return useRemembered, ""
	}
	return mustVerify, ""
}
