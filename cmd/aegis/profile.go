package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiles are the --cpuprofile and --memprofile flags of a command.
type profiles struct{ cpu, mem string }

// addProfileFlags adds --cpuprofile and --memprofile to c and wraps its RunE
// so that the whole command is profiled (go tool pprof reads the files).
func addProfileFlags(c *cobra.Command) {
	p := &profiles{}
	c.Flags().StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the command to this file")
	c.Flags().StringVar(&p.mem, "memprofile", "", "write a heap profile (allocations) at the end of the command to this file")
	run := c.RunE
	c.RunE = func(c *cobra.Command, args []string) (err error) {
		stop, err := p.start()
		if err != nil {
			return err
		}
		defer func() {
			if e := stop(); err == nil {
				err = e
			}
		}()
		return run(c, args)
	}
}

// start begins CPU profiling if asked; stop ends it and writes the heap
// profile if asked.
func (p *profiles) start() (stop func() error, err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return fmt.Errorf("--cpuprofile: %w", err)
			}
		}
		if p.mem == "" {
			return nil
		}
		f, err := os.Create(p.mem)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("--memprofile: %w", err)
		}
		return f.Close()
	}, nil
}
