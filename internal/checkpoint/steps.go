package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

// maxStepBytes bounds a step as the program writes it in CompleteMark and
// as StepFile holds it: a decimal int64 and a newline.
const maxStepBytes = 32

// markedStep is the step the program wrote in its mark (mark_complete(step=N)),
// nil for an empty mark. A mark that is no regular file, or holds anything
// but a number from 0 up, has none, and says why.
func markedStep(mark string) (*int64, error) {
	fi, err := os.Lstat(mark)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no regular file", CompleteMark)
	}
	if fi.Size() == 0 {
		return nil, nil
	}
	f, err := os.Open(mark)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStepBytes+1))
	if err != nil {
		return nil, err
	}
	return parseStep(data)
}

func parseStep(data []byte) (*int64, error) {
	s := strings.TrimSpace(string(data))
	if len(data) > maxStepBytes || s == "" {
		return nil, fmt.Errorf("%s holds no step (a number from 0 up)", CompleteMark)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%s holds %q, no step (a number from 0 up)", CompleteMark, s)
	}
	return &n, nil
}

// boundedBuffer takes at most maxStepBytes+1 bytes, then refuses more.
type boundedBuffer struct{ bytes.Buffer }

var errStepTooLong = errors.New("longer than a step")

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxStepBytes {
		return 0, errStepTooLong
	}
	return b.Buffer.Write(p)
}

// savedStep is the step a checkpoint was saved with; ok is false when it
// has none (or an unreadable one, which counts as none).
func savedStep(ctx context.Context, st Store, dir, slot string, c Checkpoint) (int64, bool, error) {
	var b boundedBuffer
	_, err := st.ReadFileTo(ctx, path.Join(dir, slot, c.ID, StepFile), &b)
	if isNotExist(err) || errors.Is(err, errStepTooLong) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, perr := parseStep(b.Bytes())
	if perr != nil {
		return 0, false, nil
	}
	return *n, true, nil
}

// restoreChoice picks the checkpoint Restore lays down for each slot that
// has one. When every such slot's newest names its step, it is each slot's
// newest of the newest step all of them have: a kill that cut one task's
// last save short rolls every task back to the step before, so per-rank
// shards agree. Otherwise (some newest without a step, or no step in
// common) it is each slot's newest.
func (k *Keeper) restoreChoice(ctx context.Context, slots []string) (map[string]Checkpoint, error) {
	newest := map[string]Checkpoint{}
	bySteps := map[string]map[int64]Checkpoint{} // per slot: step -> its newest checkpoint of that step
	stepped := true
	for _, slot := range slots {
		all, err := restorable(ctx, k.Store, k.Spec, slot)
		if err != nil {
			return nil, err
		}
		if len(all) == 0 {
			continue
		}
		newest[slot] = all[len(all)-1]
		if !stepped {
			continue
		}
		steps := map[int64]Checkpoint{}
		var last bool
		for _, c := range all {
			n, ok, err := savedStep(ctx, k.Store, k.Spec.Dir, slot, c)
			if err != nil {
				return nil, err
			}
			if ok {
				steps[n] = c // oldest first: the newest of a step stays
			}
			last = ok
		}
		stepped = last
		bySteps[slot] = steps
	}
	if !stepped || len(newest) < 2 {
		return newest, nil
	}
	common, ok := newestCommonStep(bySteps)
	if !ok {
		k.logf("the tasks' checkpoints have no step in common: each task's newest is restored")
		return newest, nil
	}
	out := map[string]Checkpoint{}
	for slot, steps := range bySteps {
		out[slot] = steps[common]
	}
	return out, nil
}

// newestCommonStep is the largest step every slot of bySteps has.
func newestCommonStep(bySteps map[string]map[int64]Checkpoint) (int64, bool) {
	best, found := int64(-1), false
	for _, steps := range bySteps {
		for n := range steps {
			if n <= best {
				continue
			}
			inAll := true
			for _, other := range bySteps {
				if _, ok := other[n]; !ok {
					inAll = false
					break
				}
			}
			if inAll {
				best, found = n, true
			}
		}
		break // every common step is one of the first slot's
	}
	return best, found
}
