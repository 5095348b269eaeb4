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
// profile if asked. Both files are created first, so that a path that
// cannot be written (a missing directory) is refused before the command
// runs, not after.
func (p *profiles) start() (stop func() error, err error) {
	var cpu, mem *os.File
	if p.mem != "" {
		if mem, err = os.Create(p.mem); err != nil {
			return nil, fmt.Errorf("--memprofile: %w", err)
		}
	}
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			if mem != nil {
				mem.Close()
			}
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			if mem != nil {
				mem.Close()
			}
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
		if mem == nil {
			return nil
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(mem, 0); err != nil {
			mem.Close()
			return fmt.Errorf("--memprofile: %w", err)
		}
		if err := mem.Close(); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		return nil
	}, nil
}
