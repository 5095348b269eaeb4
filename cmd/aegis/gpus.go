package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/aegis-sched/aegis/executor/gpu"
)

func newGPUsCmd() *cobra.Command {
	var (
		kind, list string
		samples    int
	)
	c := &cobra.Command{
		Use:   "gpus",
		Short: "List this machine's GPUs and print a few telemetry samples",
		Long: `Open the GPU telemetry the executor would use (--telemetry, see
docs/gpu-telemetry.md), say which source was chosen and why, list the GPUs
and print --samples readings one second apart: memory, utilization, the
pressure signals (SMACT, SMOCC, DRAMA) where available, and the processes
on each GPU. Needs a binary built with cgo on Linux (make gpu-build).`,
		Example: "  aegis gpus --telemetry auto --samples 3",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if samples < 0 {
				return usageError{fmt.Errorf("%s: --samples %d: want 0 or more", c.CommandPath(), samples)}
			}
			idx, err := gpu.ParseList(list)
			if err != nil {
				return usageError{fmt.Errorf("%s: --gpus: %w", c.CommandPath(), err)}
			}
			src, err := gpu.Open(kind, gpu.Options{GPUs: idx, Log: c.OutOrStdout()})
			if err != nil {
				return err
			}
			// SIGINT/SIGTERM end the readings early but still close the
			// source (and stop a dcgmi child).
			ctx := c.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			err = printGPUs(ctx, c.OutOrStdout(), src, samples, time.Second)
			if ctx.Err() != nil {
				err = nil
			}
			if cerr := src.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}
	c.Flags().StringVar(&kind, "telemetry", gpu.KindAuto, "telemetry source: "+strings.Join(gpu.Kinds(), ", "))
	c.Flags().StringVar(&list, "gpus", "", "GPU indices to read, e.g. 0,1 (default all)")
	c.Flags().IntVar(&samples, "samples", 3, "readings to print, one per interval")
	return c
}

// sampleLine is one reading as printGPUs prints it: "-" for pressure
// signals the source lacks, "dropped: why" for ones it lost this time, "?"
// for processes the driver cannot list.
func sampleLine(s gpu.Sample) string {
	procs := make([]string, len(s.Procs))
	for k, p := range s.Procs {
		procs[k] = fmt.Sprintf("%d:%.0f", p.PID, p.UsedMiB)
	}
	if s.ProcsUnknown {
		procs = []string{"?"}
	}
	press, sm, so, dr := "no", "-", "-", "-"
	if s.Pressure {
		press = "yes"
		sm, so, dr = fmt.Sprintf("%.3f", s.SMACT), fmt.Sprintf("%.3f", s.SMOCC), fmt.Sprintf("%.3f", s.DRAMA)
	} else if s.Dropped != "" {
		press = "dropped"
		procs = append(procs, "("+s.Dropped+")")
	}
	line := fmt.Sprintf("%-12s  %3d  %9.0f  %9.0f  %5.0f  %8s  %5s  %5s  %5s  %s",
		s.At.Format("15:04:05.000"), s.GPU, s.UsedMiB, s.TotalMiB, s.UtilPct, press, sm, so, dr, strings.Join(procs, " "))
	return strings.TrimRight(line, " ")
}

// printGPUs prints src's devices and n samples taken every interval. A
// failed reading prints as missed; it is an error only when every reading
// failed.
func printGPUs(ctx context.Context, w io.Writer, src gpu.Source, n int, interval time.Duration) error {
	devs, err := src.Devices()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%3s  %-40s  %-28s  %10s\n", "gpu", "uuid", "name", "total MiB")
	for _, d := range devs {
		fmt.Fprintf(w, "%3d  %-40s  %-28s  %10.0f\n", d.Index, d.UUID, d.Name, d.TotalMiB)
	}
	if n == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%-12s  %3s  %9s  %9s  %5s  %8s  %5s  %5s  %5s  %s\n",
		"time", "gpu", "used MiB", "total MiB", "util%", "pressure", "SMACT", "SMOCC", "DRAMA", "processes (pid:MiB)")
	missed := 0
	tick := time.NewTicker(max(interval, time.Millisecond))
	defer tick.Stop()
	for i := range n {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		got, err := src.Sample(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// A failed reading is a missed sample, as in aegis exec; only
			// a source that never reads is an error.
			if missed++; missed == n {
				return fmt.Errorf("no sample from %s (%d tries): %w", src.Name(), n, err)
			}
			fmt.Fprintf(w, "%-12s  sample %d missed: %v\n", time.Now().Format("15:04:05.000"), i+1, err)
			continue
		}
		for _, s := range got {
			fmt.Fprintln(w, sampleLine(s))
		}
	}
	return nil
}
