package yarn

import (
	"context"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// DefaultPollInterval is how often WaitApplication asks for a report: often
// enough that a kill shows within a second, rare enough to be no load on the RM.
const DefaultPollInterval = 250 * time.Millisecond

// WaitApplication polls the application's report until done returns true,
// returning that report. It stops with the last report seen and ctx's error
// when ctx ends, so callers can say what state the application was stuck in.
func (c *ApplicationClient) WaitApplication(ctx context.Context, id *hadoopyarn.ApplicationIdProto, every time.Duration,
	done func(*hadoopyarn.ApplicationReportProto) bool) (*hadoopyarn.ApplicationReportProto, error) {
	if every <= 0 {
		every = DefaultPollInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var last *hadoopyarn.ApplicationReportProto
	for {
		r, err := c.GetApplicationReport(ctx, id)
		if err != nil {
			if last != nil && ctx.Err() != nil {
				return last, waitError(id, last, ctx.Err())
			}
			return last, err
		}
		last = r
		if done(r) {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return last, waitError(id, last, ctx.Err())
		case <-t.C:
		}
	}
}

func waitError(id *hadoopyarn.ApplicationIdProto, last *hadoopyarn.ApplicationReportProto, err error) error {
	return fmt.Errorf("yarn: waiting for %s (still %s): %w",
		FormatApplicationID(id), AppStateName(last.GetYarnApplicationState()), err)
}

// KillApplication force-kills the application and waits until the RM
// reports it ended, returning the final report. An application that had
// already ended is left alone and its report returned.
func (c *ApplicationClient) KillApplication(ctx context.Context, id *hadoopyarn.ApplicationIdProto, diagnostics string) (*hadoopyarn.ApplicationReportProto, error) {
	r, err := c.GetApplicationReport(ctx, id)
	if err != nil {
		return nil, err
	}
	if IsTerminal(r.GetYarnApplicationState()) {
		return r, nil
	}
	if _, err := c.ForceKillApplication(ctx, id, diagnostics); err != nil {
		return r, err
	}
	return c.WaitApplication(ctx, id, DefaultPollInterval, func(r *hadoopyarn.ApplicationReportProto) bool {
		return IsTerminal(r.GetYarnApplicationState())
	})
}
