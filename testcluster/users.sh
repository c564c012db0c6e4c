# Sourced by scripts/test.sh and scripts/clean-machine.sh: removing the Unix users the test
# clusters made (root only). A user's files go first, so that a later user who is given the same
# uid inherits nothing of theirs.

# test_users_made PATTERN: the users of uid >= 2000 whose names match the extended regex PATTERN.
test_users_made() {
  getent passwd | awk -F: -v re="$1" '$3 >= 2000 && $1 ~ re { print $1 }'
}

# remove_test_user NAME: ends the user's processes, removes the files they own in the places a
# container or test writes to (the repository's cluster directories, /tmp, /var/tmp, /dev/shm)
# and their home directory, then the user. Prints one line saying so.
remove_test_user() {
  local name=$1 uid
  uid=$(id -u "$name" 2>/dev/null) || return 0
  [ "$uid" -ge 2000 ] || { echo "testcluster: not removing user $name: uid $uid is below 2000, so the test cluster did not make it" >&2; return 1; }
  pkill -KILL -u "$uid" 2>/dev/null || true
  local root=${TFYARN_REPO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
  local places=(/tmp /var/tmp /dev/shm) d
  for d in "$root"/.testcluster*; do [ -d "$d" ] && places+=("$d"); done
  local files; files=$(find "${places[@]}" -xdev -uid "$uid" 2>/dev/null | wc -l)
  find "${places[@]}" -xdev -depth -uid "$uid" \( -type d -exec rm -rf {} + -o -exec rm -f {} + \) 2>/dev/null || true
  userdel --remove "$name" >/dev/null 2>&1 || userdel "$name" >/dev/null 2>&1 || { echo "testcluster: could not remove user $name (uid $uid)" >&2; return 1; }
  echo "testcluster: removed user $name (uid $uid) and $files file(s) of theirs"
}
