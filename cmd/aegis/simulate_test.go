package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/results/page"
)

func aegis(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSimulateWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := aegis("simulate", "--trace", "demo", "--policy", "exclusive", "--server", "a100-40gb:3", "--seed", "1", "--out", dir)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "makespan")
	sum, err := os.ReadFile(filepath.Join(dir, "summary.csv"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(sum),
		"makespan_s,mean_jct_s,p95_jct_s,mean_queue_s,p95_queue_s,mean_exec_s,p95_exec_s,failed_attempts,recovered_attempts"))
	jobs, err := os.ReadFile(filepath.Join(dir, "jobs.csv"))
	require.NoError(t, err)
	require.Equal(t, 61, strings.Count(string(jobs), "\n"))
	ev, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	require.NoError(t, err)
	require.Contains(t, string(ev), `"event":"finished"`)
}

func TestBadTraceFileNamesLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.csv")
	require.NoError(t, os.WriteFile(p, []byte("submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\nx,mnist_bs32_1gpu,1\n"), 0o644))
	code, _, errs := aegis("simulate", "--trace", p)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "bad.csv:3: column submit_offset_s")
}

func TestUnknownWorkloadNamesLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "wl.csv")
	require.NoError(t, os.WriteFile(p, []byte("submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n5,resnet9000,1\n"), 0o644))
	code, _, errs := aegis("simulate", "--trace", p)
	require.Equal(t, 1, code)
	require.Contains(t, errs, `wl.csv:3: job 1: column workload_id: "resnet9000" is not in the a100-40gb catalog`)
}

func TestWorkloadsLists(t *testing.T) {
	code, out, _ := aegis("workloads")
	require.Equal(t, 0, code)
	require.Contains(t, out, "vgg16_imagenet_bs128_1gpu")
	require.Equal(t, 54, strings.Count(out, "\n")) // header + 53 workloads
}

func TestSimulateOutAllOrNothing(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "wl.csv")
	require.NoError(t, os.WriteFile(bad, []byte("submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n5,resnet9000,1\n"), 0o644))
	for _, tc := range []struct {
		name     string
		existing bool
	}{{"new directory", false}, {"existing directory", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "a", "b", "out")
			if tc.existing {
				require.NoError(t, os.MkdirAll(out, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(out, "summary.csv"), []byte("old"), 0o644))
			}
			code, _, errs := aegis("simulate", "--trace", bad, "--out", out)
			require.Equal(t, 1, code, errs)
			require.Contains(t, errs, "resnet9000")
			if !tc.existing {
				entries, err := os.ReadDir(root)
				require.NoError(t, err)
				require.Empty(t, entries, "a failed run left directories behind")
				return
			}
			entries, err := os.ReadDir(out)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			b, err := os.ReadFile(filepath.Join(out, "summary.csv"))
			require.NoError(t, err)
			require.Equal(t, "old", string(b))
			parent, err := os.ReadDir(filepath.Dir(out))
			require.NoError(t, err)
			require.Len(t, parent, 1, "temporary directory left beside --out")
		})
	}
}

// A rerun into the same --out replaces it whole: the first run's
// telemetry.csv (and a figure drawn from it) does not stay beside the
// second run's files; a folder of other files is refused.
func TestSimulateOutReplaced(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	sim := func(extra ...string) (int, string) {
		code, _, errs := aegis(append([]string{"simulate", "--trace", "demo", "--server", "a100-40gb:3", "--out", out}, extra...)...)
		return code, errs
	}
	code, errs := sim("--telemetry")
	require.Equal(t, 0, code, errs)
	require.FileExists(t, filepath.Join(out, "telemetry.csv"))
	require.NoError(t, os.WriteFile(filepath.Join(out, "timeline.svg"), []byte("<svg/>"), 0o644))
	code, errs = sim("--policy", "aegis")
	require.Equal(t, 0, code, errs)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"README.md", "deferrals.csv", "events.jsonl", "jobs.csv", "simulate.json", "summary.csv"}, names)
	require.NoError(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644))
	code, errs = sim()
	require.Equal(t, 1, code)
	require.Contains(t, errs, "holds notes.txt, which this command does not write")
	require.FileExists(t, filepath.Join(out, "notes.txt"))
}

// A simulate directory's page: its summary, figures and files (exactly
// those present, by relative link), provenance from simulate.json; the
// same run gives the same bytes, and aegis plot rewrites it.
func TestSimulatePage(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "mine.csv")
	require.NoError(t, os.WriteFile(trace, []byte("submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n5,mnist_bs32_1gpu,1\n"), 0o644))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"built-in trace", []string{"--trace", "demo", "--policy", "aegis", "--set", "memory=peakmem", "--seed", "3"}, []string{
			"# aegis simulate: trace demo under aegis, seed 3\n", "| makespan_s | ", "| trace | demo, ",
			"| GPU type a100-40gb | 3 GPUs, 40960 MiB, catalog sha256 `", "| parameters | `memory=peakmem` |",
			"| truth settings | defaults (`aegis policies` lists them) |"}},
		{"trace file, truth set", []string{"--trace", trace, "--truth", "noise=0"}, []string{
			"# aegis simulate: trace mine.csv under exclusive, seed 1\n", "| trace | mine.csv, 2 jobs, sha256 `", "| truth settings | `noise=0` |"}},
		{"cluster", []string{"--trace", "demo", "--cluster", "a100-40gb:8x2,h200-141gb:8x1", "--policy", "lucid"}, []string{
			"| server | a100-40gb:8x2,h200-141gb:8x1 |", "| GPU type a100-40gb | 16 GPUs,", "| GPU type h200-141gb | 8 GPUs,"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pages []string
			for _, d := range []string{"a", "b"} {
				dir := filepath.Join(t.TempDir(), d)
				code, _, errs := aegis(append([]string{"simulate", "--out", dir}, tc.args...)...)
				require.Equal(t, 0, code, errs)
				b, err := os.ReadFile(filepath.Join(dir, "README.md"))
				require.NoError(t, err)
				pages = append(pages, string(b))
				if d == "b" {
					code, _, errs = aegis("plot", dir, "--format", "png")
					require.Equal(t, 0, code, errs)
					b, err = os.ReadFile(filepath.Join(dir, "README.md"))
					require.NoError(t, err)
					require.Contains(t, string(b), "![jct-cdf](jct-cdf.png)")
					requireLinksEntries(t, dir, b)
				}
			}
			require.Equal(t, pages[0], pages[1], "the same run, the same bytes")
			for _, w := range tc.want {
				require.Contains(t, pages[0], w)
			}
		})
	}
}

// requireLinksEntries checks that page md of dir links each of dir's
// entries but itself once, and nothing else.
func requireLinksEntries(t *testing.T, dir string, md []byte) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var want []string
	for _, e := range ents {
		if e.Name() != "README.md" {
			want = append(want, e.Name())
		}
	}
	var got []string
	for _, l := range page.Links(md) {
		got = append(got, strings.TrimSuffix(l, "/")) // a folder's link
	}
	require.ElementsMatch(t, want, got)
}
