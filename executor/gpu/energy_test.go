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
