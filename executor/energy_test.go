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
			log := runExclusive(t, cfg)
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

// A source without an energy counter (a Fake) adds no columns.
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

// TestPowerTelemetry: telemetry.csv has each reading's power draw, in
// watts; a source whose power reading is unsupported, or fails from some
// point of the run on, leaves the cells empty and says so once.
func TestPowerTelemetry(t *testing.T) {
	lost := "nvml: nvmlDeviceGetPowerUsage on GPU 0: GPU is lost"
	unsupported := "nvml: nvmlDeviceGetPowerUsage on GPU 0: power reading unsupported (Not Supported)"
	for _, tc := range []struct {
		name  string
		steps [][2]gpu.Sample // each step's readings of GPUs 0 and 1 (the first also New's probe)
		first []string        // the first row's power cells of GPUs 0 and 1
		later string          // GPU 0's power cells after its first row
		log   string
	}{
		{"read", [][2]gpu.Sample{{{HasPower: true, PowerW: 61.25}, {HasPower: true, PowerW: 250}}},
			[]string{"61.2", "250.0"}, "61.2", ""},
		{"unsupported", [][2]gpu.Sample{{{NoPower: unsupported}, {NoPower: unsupported}}},
			[]string{"", ""}, "", unsupported},
		{"error mid-run", [][2]gpu.Sample{{{HasPower: true, PowerW: 70}, {HasPower: true, PowerW: 80}}, {{NoPower: lost}, {HasPower: true, PowerW: 80}}},
			[]string{"70.0", "80.0"}, "", lost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := realConfig(t, wOK)
			ws, err := executor.ParseWorkloads([]byte("workloads:\n  - id: "+wOK+"\n    command: [sleep, '1.5']\n"), "test.yaml")
			require.NoError(t, err)
			cfg.Workloads = ws
			devs, err := fakeGPUs(2).Devices()
			require.NoError(t, err)
			var steps []gpu.FakeStep
			for _, st := range append([][2]gpu.Sample{tc.steps[0]}, tc.steps...) {
				for g := range st {
					st[g].GPU, st[g].TotalMiB = g, 40960
				}
				steps = append(steps, gpu.FakeStep{Samples: st[:]})
			}
			cfg.Source = gpu.NewFake(devs, steps...)
			log := runExclusive(t, cfg)
			b, err := os.ReadFile(filepath.Join(cfg.Dir, executor.TelemetryName))
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			require.True(t, strings.HasSuffix(lines[0], ",power_w"), lines[0])
			cells := map[string][]string{}
			for _, l := range lines[1:] {
				f := strings.Split(l, ",")
				cells[f[0]] = append(cells[f[0]], f[len(f)-1])
			}
			require.Greater(t, len(cells["0"]), 1, "a run of 1.5 s has readings of several seconds:\n%s", b)
			require.Equal(t, tc.first, []string{cells["0"][0], cells["1"][0]})
			for _, c := range cells["0"][1:] {
				require.Equal(t, tc.later, c, "GPU 0's later rows:\n%s", b)
			}
			if tc.log == "" {
				require.NotContains(t, log.String(), "no power reading")
				return
			}
			require.Equal(t, 1, strings.Count(log.String(), "no power reading"), log.String())
			require.Contains(t, log.String(), "telemetry: GPU 0: no power reading ("+tc.log+"); telemetry.csv's power_w is left empty where a reading has none")
		})
	}
	// A source that reads no power says that.
	log := runExclusive(t, realConfig(t, wFail))
	require.Contains(t, log.String(), "no power reading (the telemetry source fake reads no power)")
}

// runExclusive runs cfg's jobs under Exclusive and returns the run's log.
func runExclusive(t *testing.T, cfg executor.Config) *strings.Builder {
	t.Helper()
	var log strings.Builder
	cfg.Log = &log
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	_, err = executor.Execute(context.Background(), x, &exclusive.Policy{})
	require.NoError(t, err)
	return &log
}
