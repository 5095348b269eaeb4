package executor

import (
	"context"
	"fmt"
	"time"
)

// drain is the end of a run whose directory failed (x.fault): no job is
// launched and nothing is journaled any more, so the attempts still
// running are neither killed (a resume would read a kill as the job's
// failure) nor recorded as ended here: drain waits for each to end
// (driving the emulator meanwhile), says how it ended, and kills what is
// left of its process group. Their shims record their exit status, from
// which a resume settles them. It returns early, leaving them running for
// a resume to adopt, when ctx is done.
func (x *Executor) drain(ctx context.Context) {
	n := x.running()
	if n == 0 {
		return
	}
	fmt.Fprintf(x.cfg.Log, "%v\nno job is launched any more; waiting for the %d running attempt(s) to end "+
		"(interrupt to leave them running: aegis exec --resume %s adopts them)\n", x.fault, n, x.cfg.Dir)
	tick := time.NewTicker(max(time.Duration(float64(time.Second)/x.cfg.Speedup), time.Millisecond))
	defer tick.Stop()
	for x.running() > 0 {
		select {
		case <-ctx.Done():
			fmt.Fprintf(x.cfg.Log, "left %d attempt(s) running for aegis exec --resume %s\n", x.running(), x.cfg.Dir)
			return
		case <-x.exits:
		case <-tick.C:
			x.cfg.Source.Sample(ctx) // an emulator ends its jobs as it samples
		}
		for _, a := range x.att {
			if a != nil && !alive(a.pid, a.start) {
				x.drained(a)
			}
		}
	}
}

// drained reports how attempt a ended during a drain and forgets it.
func (x *Executor) drained(a *attempt) {
	if _, err := reapGroup(a.pid, a.start); err != nil {
		fmt.Fprintf(x.cfg.Log, "job %s attempt %d: %v\n", x.specs[a.job].ID, a.n, err)
	}
	how := "recorded no exit status"
	if st, ok, err := readStatus(a.status); err != nil {
		how = err.Error()
	} else if ok {
		how = fmt.Sprintf("exit code %d", st.Code)
	}
	fmt.Fprintf(x.cfg.Log, "job %s attempt %d ended (%s); not journaled: a resume reads %s\n", x.specs[a.job].ID, a.n, how, a.status)
	x.release(a)
}
