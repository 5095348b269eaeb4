package gpu

import (
	"context"
	"errors"
)

// ErrNoEnergy is wrapped by EnergyMeter.Energy where the devices have no
// energy counter (NVML's total energy consumption is supported from Volta
// on; emulated GPU types without a power model have none either).
var ErrNoEnergy = errors.New("energy counter unsupported")

// ErrNoPower is wrapped by a power reading that the device does not
// support (NVML's power usage on a board without a power sensor).
var ErrNoPower = errors.New("power reading unsupported")

// An EnergyMeter is a Source that also reads each device's energy counter.
type EnergyMeter interface {
	// Energy reads every device's total energy counter, millijoules
	// since the driver loaded (NVML's nvmlDeviceGetTotalEnergyConsumption),
	// in the order Devices lists them.
	Energy(ctx context.Context) ([]uint64, error)
}
