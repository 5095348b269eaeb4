package executor_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/executor"
	"github.com/aegis-sched/aegis/traces"
)

// One executor per run directory: while one holds it (a fresh run or a
// resume), neither a second fresh run nor a resume may open it, and the
// refusal names the holder's PID; once the holder closes, a resume may.
func TestRunDirectoryLock(t *testing.T) {
	cfg := realConfig(t, wOK)
	x, err := executor.New(cfg, nil)
	require.NoError(t, err)
	journal := filepath.Join(cfg.Dir, "journal.jsonl")
	holder := fmt.Sprintf("process %d holds", os.Getpid())

	_, err = executor.New(cfg, nil)
	require.ErrorIs(t, err, executor.ErrLocked)
	require.ErrorContains(t, err, holder)
	_, _, err = executor.OpenJournal(journal)
	require.ErrorIs(t, err, executor.ErrLocked)
	require.ErrorContains(t, err, holder)

	require.NoError(t, x.Close())
	j, recs, err := executor.OpenJournal(journal)
	require.NoError(t, err)
	_, _, err = executor.OpenJournal(journal)
	require.ErrorIs(t, err, executor.ErrLocked, "a resume holds the lock too")
	x, err = executor.Resume(cfg, j, recs)
	require.NoError(t, err)
	require.NoError(t, x.Close())
}

// A job that needs more GPUs than the run has is refused before anything
// is written: the run directory is not even created.
func TestNewChecksJobsBeforeWriting(t *testing.T) {
	cfg := realConfig(t, wOK)
	cfg.Dir = filepath.Join(cfg.Dir, "run")
	cfg.Source = fakeGPUs(1)
	cfg.Jobs = append(cfg.Jobs, traces.Job{ID: "big", Workload: "gpt2_large_wiki_bs8_2gpu", GPUs: 2})
	_, err := executor.New(cfg, nil)
	require.ErrorContains(t, err, "job big needs 2 GPUs; the run has 1")
	require.NoDirExists(t, cfg.Dir)
}

// A journal cut short, with a run time past the bound or in the future, or
// naming GPUs the run does not have, is refused naming the file and line.
func TestResumeRefusesDamagedJournal(t *testing.T) {
	tests := []struct {
		name string
		edit func(lines []string) []string
		want string
	}{
		{"cut to the run record", func(l []string) []string { return l[:1] },
			"journal.jsonl:1: the run started with 2 jobs but the journal lists 0 before line 2: it was cut short"},
		{"cut after one job", func(l []string) []string { return l[:2] },
			"journal.jsonl:2: the run started with 2 jobs but the journal lists 1"},
		{"time near the int64 limit", func(l []string) []string {
			return append(l, `{"type":"arrived","t":9223372036854775000,"job":0}`)
		}, "journal.jsonl:4: run time t=9223372036854775000 ns: want 0 to"},
		{"negative submit", func(l []string) []string {
			l[2] = strings.Replace(l[2], `"submit_ns":0`, `"submit_ns":-5`, 1)
			return l
		}, "journal.jsonl:3: submit_ns -5"},
		{"time in the future", func(l []string) []string {
			return append(l, `{"type":"arrived","t":1000000000000000000,"job":0}`)
		}, "journal.jsonl:4: run time 277777h46m40s is after now"},
		{"GPU the run lacks", func(l []string) []string {
			return append(l, `{"type":"arrived","t":1,"job":0}`, `{"type":"launch","t":2,"job":0,"attempt":1,"gpus":[7]}`)
		}, "journal.jsonl:5: launch record: job 0 on GPUs [7]; the run has 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := realConfig(t, wOK, wOK)
			x, err := executor.New(cfg, nil)
			require.NoError(t, err)
			require.NoError(t, x.Close())
			path := filepath.Join(cfg.Dir, "journal.jsonl")
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			lines := tt.edit(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
			j, recs, err := executor.OpenJournal(path)
			if err == nil {
				_, err = executor.Resume(cfg, j, recs)
				j.Close()
			}
			require.ErrorContains(t, err, tt.want)
			require.ErrorContains(t, err, path)
		})
	}
}

// An executor SIGKILLed while it starts a process (an attempt's shim) can
// leave the child between fork and exec, sharing the lock file until its
// exec closes it; a resume right after the kill (the executor reaped) takes
// the lock once the child lets go instead of refusing the directory. Each
// round kills the holder at a random point while it forks without pause.
func TestResumeRightAfterKillWhileForking(t *testing.T) {
	const rounds = 30
	selfCmd := self(t)
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := executor.CreateJournal(path, executor.Record{Type: "run", Run: &executor.Run{Start: time.Now()}})
	require.NoError(t, err)
	require.NoError(t, j.Close())
	rng := rand.New(rand.NewPCG(3, 1))
	for i := range rounds {
		cmd := exec.Command(selfCmd[0], "lock-and-fork", path)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(out).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "locked\n", line)
		// Where to kill it, not a wait for anything.
		time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		require.Error(t, cmd.Wait())
		j, _, err := executor.OpenJournal(path)
		require.NoError(t, err, "round %d", i)
		require.NoError(t, j.Close())
	}
}
