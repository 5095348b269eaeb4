package aegis

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/colloc"
)

// foresightViolation is the fence around policies.Foresight: a policy may
// use future samples to find when its answers could change, never to
// decide. It runs two instances of a policy (mk) decision by decision on
// the same views, one second apart for the given number of seconds: one
// reads telemetry that foresees its samples (policies.Foresight), the
// other the same samples without the future (policies.SteadyTelemetry
// only). It returns an error naming the first decision whose actions
// (Wake aside: when to decide next is what foresight is for) differ, and
// how many placements the run made.
func foresightViolation(mk func() policies.Policy, seconds int) (places int, err error) {
	var now time.Duration
	seeing, blind := mk(), mk()
	view := func(tel policies.Telemetry) *policies.View {
		return &policies.View{Now: now, Pressure: true, Telemetry: tel,
			GPUs: []policies.GPU{
				{Jobs: []policies.JobID{0}, CapacityMiB: 40960, UsedMiB: 8000},
				{Jobs: []policies.JobID{1}, CapacityMiB: 40960, UsedMiB: 8000}},
			Jobs: []policies.Job{
				{ID: 0, GPUs: 1, State: policies.Running, On: []int{0}, Active: true},
				{ID: 1, GPUs: 1, State: policies.Running, On: []int{1}, Active: true},
				{ID: 2, GPUs: 1, State: policies.Pending}},
			Queue: policies.ListOf(2)}
	}
	decided := func(acts []policies.Action) []policies.Action {
		return slices.DeleteFunc(slices.Clone(acts), func(a policies.Action) bool { return a.Kind == policies.Wake })
	}
	for k := range seconds {
		now = time.Duration(k)*time.Second + 300*time.Millisecond
		a := decided(seeing.Schedule(view(waveAhead{wave{&now}})))
		b := decided(blind.Schedule(view(wave{&now})))
		if !slices.EqualFunc(a, b, func(x, y policies.Action) bool {
			return x.Kind == y.Kind && x.Job == y.Job && x.GPU == y.GPU && x.Reason == y.Reason && slices.Equal(x.GPUs, y.GPUs)
		}) {
			return places, fmt.Errorf("at %v the policy decides %v with foresight and %v without", now, a, b)
		}
		for _, x := range a {
			if x.Kind == policies.Place {
				places++
			}
		}
	}
	return places, nil
}

// wave is steady telemetry whose samples rise and fall slowly (a period
// of about 157 s), so that window scores cross the thresholds.
type wave struct{ now *time.Duration }

func (w wave) at(k int64) policies.Sample {
	x := 0.5 + 0.45*math.Sin(float64(k)/25)
	return policies.Sample{At: time.Duration(k) * time.Second, SMACT: x, SMOCC: x, DRAMA: x, UtilPct: 100 * x}
}

func (w wave) Samples(dst []policies.Sample, _, n int) []policies.Sample {
	last := int64(*w.now / time.Second)
	for k := max(last-int64(n)+1, 0); k <= last; k++ {
		dst = append(dst, w.at(k))
	}
	return dst
}
func (wave) UsedMiBChangesAt(int) time.Duration { return colloc.Never }
func (wave) SampleRange(int) (lo, hi policies.Sample) {
	return lo, policies.Sample{SMACT: 1, SMOCC: 1, DRAMA: 1, UtilPct: 100}
}

// waveAhead is wave with its future told (policies.Foresight).
type waveAhead struct{ wave }

func (w waveAhead) Ahead(dst []policies.Sample, _ int, after time.Duration, n int) []policies.Sample {
	first := int64(after/time.Second) + 1
	for k := first; k < first+int64(n); k++ {
		dst = append(dst, w.at(k))
	}
	return dst
}
func (waveAhead) Regime(int) uint64             { return 1 }
func (waveAhead) RegimeSince(int) time.Duration { return 0 }

// peeker is AEGIS made to cheat: it holds back its placements when the
// sample to come (policies.Foresight.Ahead) is busy.
type peeker struct{ *Policy }

func (p peeker) Schedule(v *policies.View) []policies.Action {
	acts := p.Policy.Schedule(v)
	if fs, ok := v.Telemetry.(policies.Foresight); ok {
		if next := fs.Ahead(nil, 0, v.Now.Truncate(time.Second), 1); len(next) == 1 && next[0].SMACT > 0.5 {
			acts = slices.DeleteFunc(acts, func(a policies.Action) bool { return a.Kind == policies.Place })
		}
	}
	return acts
}

// AEGIS decides the same with and without foresight, under each filter,
// on telemetry whose verdicts flip every minute or two; the fence catches a policy that decides on a future sample.
func TestForesightNeverDecides(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Config)
		cheat bool
	}{
		{"pressure", func(*Config) {}, false},
		{"pressure, window 60, not anchored", func(c *Config) {
			c.Window, c.Anchored = 60, false
		}, false},
		{"util", func(c *Config) { c.Filter, c.UtilPct = "util", 50 }, false},
		{"a policy peeking at the next sample", func(*Config) {}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func() policies.Policy {
				c := DefaultConfig()
				tc.set(&c)
				if tc.cheat {
					return peeker{NewWith(c)}
				}
				return NewWith(c)
			}
			places, err := foresightViolation(mk, 600)
			if tc.cheat {
				require.Error(t, err, "the fence misses a policy that decides on a future sample")
				return
			}
			require.NoError(t, err)
			require.Greater(t, places, 10, "the filter lets jobs through now and then")
		})
	}
}
