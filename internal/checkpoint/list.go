package checkpoint

import (
	"context"
	"path"
	"sort"
)

// List is every complete checkpoint in a job's directory, by task, oldest
// first.
func List(ctx context.Context, st Store, dir string) ([]Checkpoint, error) {
	slots, err := st.ReadDir(ctx, dir)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []Checkpoint
	for _, fi := range slots {
		if !fi.IsDir() {
			continue
		}
		cs, err := Complete(ctx, st, dir, fi.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Slot < out[j].Slot })
	return out, nil
}

// Jobs names the job directories under root (the user's checkpoints
// directory).
func Jobs(ctx context.Context, st Store, root string) ([]string, error) {
	entries, err := st.ReadDir(ctx, root)
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, fi := range entries {
		if fi.IsDir() {
			out = append(out, fi.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// JobDir is the directory of the job named name under root.
func JobDir(root, name string) string { return path.Join(root, name) }
