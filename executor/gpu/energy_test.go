package gpu

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNVMLEnergy reads the energy counter through the fake NVML: every
// device's in Devices order; unsupported wraps ErrNoEnergy; another error
// names the GPU.
func TestNVMLEnergy(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail error
		want []uint64
		err  string
	}{
		{"counters", nil, []uint64{1000, 2000}, ""},
		{"unsupported", fmt.Errorf("%w (Not Supported)", ErrNoEnergy), nil, "nvml: GPU 1: total energy: energy counter unsupported (Not Supported)"},
		{"an error", errors.New("GPU is lost"), nil, "nvml: GPU 1: total energy: GPU is lost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lib := twoGPUs(false)
			lib.devs[0].energy, lib.devs[1].energy = 1000, 2000
			if tc.fail != nil {
				lib.fail, lib.failDev = map[string]error{"TotalEnergy": tc.fail}, 1
			}
			s, err := newNVMLSource(lib, nvmlConfig{})
			require.NoError(t, err)
			got, err := s.Energy(context.Background())
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				require.Equal(t, errors.Is(tc.fail, ErrNoEnergy), errors.Is(err, ErrNoEnergy))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestNVMLPower reads each device's power draw with its sample: milliwatts
// as watts; an unsupported reading leaves every sample without power, says
// why, and is not tried again; an error mid-run drops that reading's power
// only (memory and utilization stand) and the next reading has it again.
func TestNVMLPower(t *testing.T) {
	lib := twoGPUs(false)
	lib.devs[0].power, lib.devs[1].power = 61250, 250000
	s, err := newNVMLSource(lib, nvmlConfig{})
	require.NoError(t, err)
	power := func() []Sample {
		got, err := s.Sample(context.Background())
		require.NoError(t, err, "a power reading never fails the sample")
		return got
	}
	got := power()
	require.True(t, got[0].HasPower && got[1].HasPower)
	require.Equal(t, []float64{61.25, 250}, []float64{got[0].PowerW, got[1].PowerW})

	lib.fail, lib.failDev = map[string]error{"Power": errors.New("GPU is lost")}, 1
	got = power()
	require.True(t, got[0].HasPower)
	require.False(t, got[1].HasPower)
	require.Equal(t, "nvml: nvmlDeviceGetPowerUsage on GPU 1: GPU is lost", got[1].NoPower)
	require.Equal(t, float64(lib.devs[1].util), got[1].UtilPct, "the rest of the reading stands")
	lib.fail = nil
	require.True(t, power()[1].HasPower, "a failed reading is tried again")

	lib.fail = map[string]error{"Power": fmt.Errorf("%w (Not Supported)", ErrNoPower)}
	got = power()
	require.False(t, got[1].HasPower)
	require.Contains(t, got[1].NoPower, "power reading unsupported (Not Supported)")
	n := lib.powerCalls
	got = power()
	require.Equal(t, n+1, lib.powerCalls, "an unsupported reading is not tried again")
	require.True(t, got[0].HasPower, "GPU 0 reads its power")
	require.False(t, got[1].HasPower)
	require.Contains(t, got[1].NoPower, "unsupported")
}
