package executor_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/gpu"
	"github.com/aegis-sched/aegis/policies/exclusive"
)

// TestMeasuredEnergy reads the GPUs' energy counters at the start and end
// of a run (a scripted meter): the difference is the run's energy; a
// counter that wrapped past 2^64 mJ counts modulo 2^64; a counter that went
// back (a reset), an unsupported counter or a read that fails at the end
// leave the columns empty and are said once.
func TestMeasuredEnergy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, end []uint64
		startErr   error
		endErr     error
		wantJ      string // summary.csv's energy_j ("" empty)
		log        string
	}{
		{"measured", []uint64{1000, 5000}, []uint64{4000, 9000}, nil, nil, "7.000", ""},
		{"wrap", []uint64{math.MaxUint64 - 999, 0}, []uint64{1000, 2000}, nil, nil, "4.000", ""},
		{"reset", []uint64{5000, 0}, []uint64{1000, 0}, nil, nil, "", "GPU 0's counter went back from 5000 to 1000 mJ"},
		{"unsupported", nil, nil, fmt.Errorf("%w (Not Supported)", gpu.ErrNoEnergy), nil, "", "energy counter unsupported (Not Supported)"},
		{"error mid-run", []uint64{1, 1}, nil, nil, errors.New("GPU is lost"), "", "at the end: GPU is lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := realConfig(t, wFail)
			calls := 0
			cfg.Source = &gpu.MeteredFake{Fake: fakeGPUs(2), Meter: func(call int) ([]uint64, error) {
				calls++
				if call == 0 {
					return tc.start, tc.startErr
				}
				return tc.end, tc.endErr
			}}
			var log strings.Builder
			cfg.Log = &log
			x, err := executor.New(cfg, nil)
			require.NoError(t, err)
			_, err = executor.Execute(context.Background(), x, &exclusive.Policy{})
			require.NoError(t, err)
			b, err := os.ReadFile(filepath.Join(cfg.Dir, "summary.csv"))
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
			k := len(head) - 4
			require.Equal(t, "energy_j", head[k], "the energy columns are there, empty or not")
			require.Equal(t, tc.wantJ, row[k])
			if tc.log == "" {
				require.NotContains(t, log.String(), "energy:")
				return
			}
			require.Equal(t, 1, strings.Count(log.String(), "energy: not measured"), log.String())
			require.Contains(t, log.String(), tc.log)
			if tc.startErr != nil {
				require.Equal(t, 1, calls, "an unsupported counter is not read again")
			}
		})
	}
}

// A source without an energy counter (DCGM here, a Fake) adds no columns.
func TestNoEnergyMeter(t *testing.T) {
	cfg := realConfig(t, wFail)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	res, err := executor.Execute(context.Background(), x, &exclusive.Policy{})
	require.NoError(t, err)
	require.Nil(t, res.Summary.Energy)
	require.Contains(t, res.Summary.EnergyNote, "reads no energy counter")
	b, err := os.ReadFile(filepath.Join(cfg.Dir, "summary.csv"))
	require.NoError(t, err)
	require.NotContains(t, string(b), "energy_j")
}
