package gpu

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// FakeStep is one scripted reply of a Fake: the samples one Sample call
// returns, or the error it fails with.
type FakeStep struct {
	// Samples is the reply, one per device in Devices order. A sample whose
	// At is zero is stamped with the Fake's clock when it is returned.
	Samples []Sample
	// Err, when not nil, is returned instead of Samples.
	Err error
}

// Fake is a scripted Source for tests. Each Sample call returns the next
// scripted step; once the script is used up, the last step is repeated (a
// steady state), so a test scripts only the changes it cares about. Steps can
// be appended while the Fake is in use. It is safe for concurrent use.
type Fake struct {
	// Now stamps samples whose At is zero; nil means time.Now.
	Now func() time.Time

	mu      sync.Mutex
	name    string
	devices []Device
	steps   []FakeStep
	next    int
	calls   int
	closed  bool
}

// NewFake returns a Fake named "fake" reading devices and replying with steps
// in order.
func NewFake(devices []Device, steps ...FakeStep) *Fake {
	return &Fake{name: "fake", devices: slices.Clone(devices), steps: slices.Clone(steps)}
}

// SetName changes the name the Fake reports, e.g. to pose as "nvml" when a
// test checks how a utilization-only source is handled.
func (f *Fake) SetName(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.name = name
}

// Push appends steps to the script.
func (f *Fake) Push(steps ...FakeStep) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = append(f.steps, steps...)
}

// Calls returns how many times Sample has been called.
func (f *Fake) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// Name implements Source.
func (f *Fake) Name() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.name
}

// Devices implements Source.
func (f *Fake) Devices() ([]Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("gpu: fake source: Devices after Close")
	}
	return slices.Clone(f.devices), nil
}

// Sample implements Source: it returns the next scripted step (the last one
// again once the script is used up). It fails if ctx is done, the source is
// closed, nothing is scripted, or a step's sample count differs from the
// device count.
func (f *Fake) Sample(ctx context.Context) ([]Sample, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gpu: fake source: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.closed {
		return nil, errors.New("gpu: fake source: Sample after Close")
	}
	if len(f.steps) == 0 {
		return nil, errors.New("gpu: fake source: no step scripted")
	}
	i := f.next
	if i < len(f.steps) {
		f.next++
	} else {
		i = len(f.steps) - 1
	}
	step := f.steps[i]
	if step.Err != nil {
		return nil, step.Err
	}
	if len(step.Samples) != len(f.devices) {
		return nil, fmt.Errorf("gpu: fake source: step %d has %d samples for %d devices", i, len(step.Samples), len(f.devices))
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	at := now()
	out := make([]Sample, len(step.Samples))
	for j, s := range step.Samples {
		s.Procs = slices.Clone(s.Procs)
		if s.At.IsZero() {
			s.At = at
		}
		out[j] = s
	}
	return out, nil
}

// Close implements Source. Calls after Close fail.
func (f *Fake) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// MeteredFake is a Fake that is also an EnergyMeter: Meter answers its
// Energy calls (call counts them from 0), so that tests script the counter
// (a wrap, an unsupported device, an error mid-run).
type MeteredFake struct {
	*Fake
	Meter func(call int) ([]uint64, error)

	mu    sync.Mutex
	calls int
}

// Energy implements EnergyMeter.
func (f *MeteredFake) Energy(ctx context.Context) ([]uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.calls
	f.calls++
	return f.Meter(n)
}
