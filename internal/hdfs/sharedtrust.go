package hdfs

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// UntrustedCacheError says a shared cache directory is usable but not
// trusted: someone the job does not trust could replace its entries, or
// the directory itself, after the job chose them. A submission then ships
// through the user's own cache instead.
type UntrustedCacheError struct {
	Dir     string
	Problem string
}

func (e *UntrustedCacheError) Error() string {
	return fmt.Sprintf("shared cache %s is not trusted: %s", e.Dir, e.Problem)
}

// dirFacts is one directory on the way from / down to a shared cache
// directory.
type dirFacts struct {
	Path  string
	Owner string
	Perm  uint32 // mode & 07777
}

// trustRule is whom a shared cache directory's user trusts: himself, the
// HDFS superuser and the administrators the configuration names.
type trustRule struct {
	User, SuperUser string
	Admins          []string
	AdminsFrom      string // where Admins was set, for messages
}

func (r trustRule) trusts(owner string) bool {
	if owner == "" {
		return false
	}
	if owner == r.User || owner == r.SuperUser {
		return true
	}
	for _, a := range r.Admins {
		if a == owner {
			return true
		}
	}
	return false
}

// whom names the trusted, for "trusting entries adopted by ...".
func (r trustRule) whom() string {
	s := r.SuperUser + " (the HDFS superuser)"
	var admins []string
	for _, a := range r.Admins {
		if a != r.SuperUser {
			admins = append(admins, a)
		}
	}
	if len(admins) > 0 {
		s += " and " + strings.Join(admins, ", ") + " (" + r.AdminsFrom + ")"
	}
	return s
}

func (r trustRule) untrusted(owner string) string {
	if owner == "" {
		owner = "an unknown user"
	}
	from := "the configuration"
	if r.AdminsFrom != "" {
		from = r.AdminsFrom
	}
	return fmt.Sprintf("%s, who is neither the HDFS superuser (%s) nor an administrator named in %s", owner, r.SuperUser, from)
}

// judgeDirs says what makes a shared cache directory untrusted, "" when
// nothing does. chain runs from / down to the directory. Whoever owns a
// directory on the way may rename what it holds, and so may anyone who
// can write a directory that is not sticky: either could put a directory
// of their own, with their own entries, where ours was. The shared
// directory's owner may replace any of its entries. So every directory on
// the way is owned by someone trusted, and none above the shared one may
// be written by others unless it is sticky (then only the owner of what it
// holds, the directory's owner and the superuser rename; all trusted).
func judgeDirs(r trustRule, chain []dirFacts) string {
	for i, d := range chain {
		last := i == len(chain)-1
		switch {
		case last && !r.trusts(d.Owner):
			return "it is owned by " + r.untrusted(d.Owner) + " (that owner could replace any entry)"
		case !last && !r.trusts(d.Owner):
			return d.Path + " above it is owned by " + r.untrusted(d.Owner) + " (that owner could rename what it holds)"
		case !last && d.Perm&0o022 != 0 && d.Perm&0o1000 == 0:
			return fmt.Sprintf("%s above it may be written by others than its owner and is not sticky (mode %04o): they could rename what it holds", d.Path, d.Perm)
		}
	}
	return ""
}

// trustChain stats every directory from / down to dir.
func (fs *FS) trustChain(ctx context.Context, dir string) ([]dirFacts, error) {
	var paths []string
	for p := dir; ; p = path.Dir(p) {
		paths = append([]string{p}, paths...)
		if p == "/" {
			break
		}
	}
	chain := make([]dirFacts, 0, len(paths))
	for _, p := range paths {
		fi, err := fs.stat(ctx, p)
		if err != nil {
			return nil, pathErr("open shared cache", p, err)
		}
		chain = append(chain, dirFacts{Path: p, Owner: fileOwner(fi), Perm: uint32(fi.Mode()) & 0o7777}) // colinmarc keeps HDFS's raw bits: 01000 is sticky
	}
	return chain, nil
}

// wouldTrust is nil when dir, made by us, would be trusted (judgeDirs):
// the directories above it that exist are looked at.
func (fs *FS) wouldTrust(ctx context.Context, dir string, opts SharedCacheOptions) error {
	up := path.Dir(dir)
	for ; up != "/"; up = path.Dir(up) {
		if _, err := fs.stat(ctx, up); err == nil {
			break
		}
	}
	chain, err := fs.trustChain(ctx, up)
	if err != nil {
		return err
	}
	rule := trustRule{User: fs.user, SuperUser: chain[0].Owner, Admins: opts.Admins, AdminsFrom: opts.AdminsFrom}
	if problem := judgeDirs(rule, append(chain, dirFacts{Path: dir, Owner: fs.user, Perm: 0o1777})); problem != "" {
		return &UntrustedCacheError{Dir: dir, Problem: problem}
	}
	return nil
}
