package executor_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/executor/emulate"
	"github.com/aegis-sched/aegis/models"
	"github.com/aegis-sched/aegis/policies"
	"github.com/aegis-sched/aegis/policies/aegis"
	"github.com/aegis-sched/aegis/sim"
	"github.com/aegis-sched/aegis/traces"
	"github.com/stretchr/testify/require"
)

// The test binary doubles as the aegis binary the executor starts: with
// helperEnv set, its first argument selects the attempt shim, fake-train,
// or a whole emulated executor run (for the kill-and-resume test).
const helperEnv = "AEGIS_EXECUTOR_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" && len(os.Args) > 1 {
		switch os.Args[1] {
		case "attempt":
			os.Exit(executor.RunAttempt(os.Args[2:], os.Stderr))
		case "fake-train":
			os.Exit(executor.FakeTrain(os.Args[len(os.Args)-1], os.Stderr))
		case "emulated-run":
			os.Exit(emulatedRun(os.Args[2]))
		case "lock-and-fork":
			os.Exit(lockAndFork(os.Args[2]))
		}
	}
	os.Exit(m.Run())
}

// self is the command that runs this binary as the aegis binary.
func self(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(helperEnv, "1")
	return []string{exe}
}

// small is a short trace: five jobs of 40-90 solo seconds on 2 GPUs.
func small() []traces.Job {
	ws := []string{"resnet18_cifar100_bs128_20e_1gpu", "mobilenet_cifar100_bs128_20e_1gpu", "mnist_bs32_1gpu",
		"resnet18_cifar100_bs64_20e_1gpu", "mnist_bs32_1gpu"}
	var specs []traces.Job
	for i, w := range ws {
		specs = append(specs, traces.Job{ID: "j" + strconv.Itoa(i), Workload: w, GPUs: 1,
			Submit: time.Duration(i) * 5 * time.Second, SoloS: float64(40 + 10*i)})
	}
	return specs
}

// emulatedConfig is an executor run of jobs on emulated A100s.
func emulatedConfig(dir string, selfCmd []string, jobs []traces.Job, gpus int, speedup float64) (executor.Config, error) {
	srv, err := models.ParseServer(fmt.Sprintf("a100-40gb:%d", gpus))
	if err != nil {
		return executor.Config{}, err
	}
	cat := models.A100()
	inter, err := models.InterferenceFor(srv.Type)
	if err != nil {
		return executor.Config{}, err
	}
	emu, err := emulate.New(srv, cat, inter, sim.DefaultTruth(), 1, nil)
	if err != nil {
		return executor.Config{}, err
	}
	return executor.Config{Dir: dir, Jobs: jobs, Catalog: cat, Source: emu, Mirror: emu, Speedup: speedup,
		Self: selfCmd, Grace: 2 * time.Second}, nil
}

func newAegis() policies.Policy {
	p, err := aegis.New(nil)
	if err != nil {
		panic(err)
	}
	return p
}

// emulatedRun runs (or resumes) the small trace on 2 emulated GPUs in dir;
// the kill-and-resume test runs it as a separate process and kills it.
func emulatedRun(dir string) int {
	exe, _ := os.Executable()
	cfg, err := emulatedConfig(dir, []string{exe}, small(), 2, 400)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var x *executor.Executor
	if _, err := os.Stat(dir + "/journal.jsonl"); err == nil {
		j, recs, err := executor.OpenJournal(dir + "/journal.jsonl")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		x, err = executor.Resume(cfg, j, recs)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	} else if x, err = executor.New(cfg, map[string]string{"test": "emulated-run"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := executor.Execute(context.Background(), x, newAegis()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// lockAndFork resumes the journal at path, holding its directory's lock,
// says "locked" on stdout and starts processes (true, or this binary
// running no test) until it is killed, as an executor starts attempt
// shims.
func lockAndFork(path string) int {
	j, _, err := executor.OpenJournal(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer j.Close()
	argv := []string{os.Args[0], "-test.run=^$"}
	if p, err := exec.LookPath("true"); err == nil {
		argv = []string{p}
	}
	fmt.Println("locked")
	for range 4 {
		go func() {
			for {
				exec.Command(argv[0], argv[1:]...).Run()
			}
		}()
	}
	select {}
}

// resumeAegis resumes the emulated run in dir (2 GPUs, speedup 400) under
// AEGIS to its end and checks every job ended exactly once.
func resumeAegis(t *testing.T, dir string, selfCmd []string) {
	t.Helper()
	cfg, err := emulatedConfig(dir, selfCmd, nil, 2, 400)
	require.NoError(t, err)
	j, recs, err := executor.OpenJournal(filepath.Join(dir, "journal.jsonl"))
	require.NoError(t, err)
	x, err := executor.Resume(cfg, j, recs)
	require.NoError(t, err)
	_, err = executor.Execute(t.Context(), x, newAegis())
	require.NoError(t, err)
	checkExactlyOnce(t, dir)
}
