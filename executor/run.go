package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/loop"
	"github.com/aegis-sched/aegis/results"
)

// Result is what an executor run produced.
type Result struct {
	Jobs    []results.Job
	Summary results.Summary
}

// ErrRunDir is returned (wrapped) by Execute when the run directory
// failed (an I/O error on the journal, a log or a status file): the run
// launched nothing more, waited for the attempts still running, and can be
// resumed once the directory works again.
var ErrRunDir = errors.New("run directory failed")

// ErrInterrupted is returned (wrapped) by Execute when its context ended the
// run before every job was done.
var ErrInterrupted = errors.New("interrupted")

// Execute runs policy p on x until the run is over or ctx is done, then
// ends every attempt still running (Shutdown), writes the run's jobs.csv,
// summary.csv, deferrals.csv and events.jsonl into the run directory (the
// files `aegis simulate --out` writes), calls Config.Done, and closes the
// journal and the telemetry source. A run ended by ctx returns an error wrapping
// ErrInterrupted, and a run whose directory failed one wrapping ErrRunDir
// (its running attempts are left to end, not killed: see drain); either
// can be resumed. So can a run whose policy failed (a *loop.PolicyError:
// an external policy's process exited, hung or answered the impossible):
// nothing is launched after it, and the attempts running then are left to
// end, their ends journaled (settle).
func Execute(ctx context.Context, x *Executor, p policies.Policy) (*Result, error) {
	var events bytes.Buffer
	elog := results.NewEventLog(&events)
	fwd := []results.Recorder{elog}
	var prog *results.Progress
	if x.cfg.Progress != nil {
		prog = results.NewProgress(len(x.specs), x.cfg.Progress)
		fwd = append(fwd, prog)
	}
	col := results.NewCollector(x.Jobs(), fwd...)
	if t, ok := p.(policies.Ticker); ok {
		col.SetDecisionGrid(t.Tick())
	}
	x.cfg.Submitted = func(j policies.Job) {
		if err := col.Add(j); err != nil {
			fmt.Fprintf(x.cfg.Log, "results: %v\n", err)
		} else if prog != nil {
			prog.Add()
		}
	}
	em := x.startEnergy(ctx)
	runErr := loop.Run(ctx, x, p, col)
	if pe := (*loop.PolicyError)(nil); errors.As(runErr, &pe) && x.fault == nil {
		runErr = x.settle(ctx, col, runErr)
	}
	if ctx.Err() != nil && errors.Is(runErr, ctx.Err()) {
		runErr = fmt.Errorf("executor: %w at t=%v; continue with aegis exec --resume %s", ErrInterrupted, Stamp(x.clock()), x.cfg.Dir)
	}
	errs := []error{runErr}
	if x.fault != nil {
		x.drain(ctx)
		errs = []error{fmt.Errorf("%w\nthe run stopped at t=%v; continue it with aegis exec --resume %s once the directory works again",
			x.fault, Stamp(x.clock()), x.cfg.Dir)}
	} else {
		errs = append(errs, x.Shutdown())
		// What the shutdown found (attempts that finished, failed or were
		// interrupted) goes into this session's results too.
		for _, e := range x.out {
			col.Event(e)
		}
		x.out = nil
	}
	errs = append(errs, elog.Flush())
	res := &Result{Jobs: col.Jobs(), Summary: col.Summary()}
	em.finish(context.WithoutCancel(ctx), x, &res.Summary)
	errs = append(errs, writeResults(x.cfg.Dir, res, events.Bytes()))
	if x.cfg.Done != nil {
		errs = append(errs, x.cfg.Done(res, errors.Join(errs...)))
	}
	errs = append(errs, x.Close(), x.cfg.Source.Close())
	return res, errors.Join(errs...)
}

// writeResults writes the results files, each atomically.
func writeResults(dir string, r *Result, events []byte) error {
	files, err := results.RunFiles(r.Jobs, nil, r.Summary, events)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		err := results.WriteFile(filepath.Join(dir, name), func(w io.Writer) error {
			_, err := w.Write(files[name])
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// settle is the end of a run whose policy failed (cause): no decision is
// made any more, so nothing is launched, and the attempts still running
// are waited for, their ends journaled and recorded as in any run, so that
// a resume (with the policy mended) carries on from there. An interrupt
// (ctx) leaves them to Shutdown.
func (x *Executor) settle(ctx context.Context, rec loop.Recorder, cause error) error {
	n := x.running()
	if n > 0 {
		fmt.Fprintf(x.cfg.Log, "%v\nno job is launched any more; waiting for the %d running attempt(s) to end\n", cause, n)
	}
	for x.running() > 0 {
		evs, err := x.NextContext(ctx)
		if err != nil {
			return errors.Join(cause, err)
		}
		for _, e := range evs {
			rec.Event(e)
		}
	}
	return fmt.Errorf("%w\nnothing was launched after it; the %d attempt(s) running then ran to their end; continue with aegis exec --resume %s",
		cause, n, x.cfg.Dir)
}
