package gpu

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var _ Source = (*Fake)(nil)

func TestFakeScript(t *testing.T) {
	devs := []Device{{Index: 0, UUID: "GPU-a", Name: "Fake", TotalMiB: 1000}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	boom := errors.New("boom")
	f := NewFake(devs,
		FakeStep{Samples: []Sample{{GPU: 0, UsedMiB: 10, TotalMiB: 1000}}},
		FakeStep{Err: boom},
		FakeStep{Samples: []Sample{{GPU: 0, At: t0, UsedMiB: 20, TotalMiB: 1000, Procs: []Proc{{PID: 7, UsedMiB: 15}}}}},
	)
	f.Now = func() time.Time { return t0.Add(time.Hour) }
	ctx := context.Background()

	tests := []struct {
		name    string
		wantErr error
		used    float64
		at      time.Time
	}{
		{"first step, stamped by the clock", nil, 10, t0.Add(time.Hour)},
		{"scripted error", boom, 0, time.Time{}},
		{"third step keeps its own time", nil, 20, t0},
		{"script used up: last step repeats", nil, 20, t0},
	}
	for _, tc := range tests {
		got, err := f.Sample(ctx)
		if tc.wantErr != nil {
			require.ErrorIs(t, err, tc.wantErr, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		require.Len(t, got, 1, tc.name)
		require.Equal(t, tc.used, got[0].UsedMiB, tc.name)
		require.Equal(t, tc.at, got[0].At, tc.name)
	}
	require.Equal(t, 4, f.Calls())

	// A caller cannot corrupt the script through the returned slices.
	got, err := f.Sample(ctx)
	require.NoError(t, err)
	got[0].Procs[0].PID = 99
	got, err = f.Sample(ctx)
	require.NoError(t, err)
	require.Equal(t, 7, got[0].Procs[0].PID)

	f.Push(FakeStep{Samples: []Sample{{GPU: 0, UsedMiB: 30}}})
	got, err = f.Sample(ctx)
	require.NoError(t, err)
	require.Equal(t, 30.0, got[0].UsedMiB)

	f.SetName("nvml")
	require.Equal(t, "nvml", f.Name())
	d, err := f.Devices()
	require.NoError(t, err)
	require.Equal(t, devs, d)
}

func TestFakeErrors(t *testing.T) {
	devs := []Device{{Index: 0}, {Index: 1}}
	tests := []struct {
		name  string
		fake  func() *Fake
		ctx   func() context.Context
		match string
	}{
		{"nothing scripted", func() *Fake { return NewFake(devs) }, context.Background, "no step scripted"},
		{"sample count differs", func() *Fake {
			return NewFake(devs, FakeStep{Samples: []Sample{{GPU: 0}}})
		}, context.Background, "1 samples for 2 devices"},
		{"closed", func() *Fake {
			f := NewFake(devs, FakeStep{Samples: make([]Sample, 2)})
			require.NoError(t, f.Close())
			return f
		}, context.Background, "after Close"},
		{"context done", func() *Fake { return NewFake(devs, FakeStep{Samples: make([]Sample, 2)}) }, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.fake().Sample(tc.ctx())
			require.ErrorContains(t, err, tc.match)
		})
	}
}
