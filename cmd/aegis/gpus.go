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

// printGPUs prints src's devices and n samples taken every interval.
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
			return fmt.Errorf("sample %d from %s: %w", i+1, src.Name(), err)
		}
		for _, s := range got {
			procs := make([]string, len(s.Procs))
			for k, p := range s.Procs {
				procs[k] = fmt.Sprintf("%d:%.0f", p.PID, p.UsedMiB)
			}
			press, sm, so, dr := "no", "-", "-", "-"
			if s.Pressure {
				press = "yes"
				sm, so, dr = fmt.Sprintf("%.3f", s.SMACT), fmt.Sprintf("%.3f", s.SMOCC), fmt.Sprintf("%.3f", s.DRAMA)
			}
			line := fmt.Sprintf("%-12s  %3d  %9.0f  %9.0f  %5.0f  %8s  %5s  %5s  %5s  %s",
				s.At.Format("15:04:05.000"), s.GPU, s.UsedMiB, s.TotalMiB, s.UtilPct, press, sm, so, dr, strings.Join(procs, " "))
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	}
	return nil
}
