package experiments

import (
	"context"
	"errors"
	"github.com/aegis-sched/aegis/experiments/stacking"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aegis-sched/aegis/results/rundir"
	"github.com/stretchr/testify/require"
)

// smallSpec runs in well under a second: two small generated traces, three
// configs, a two-point sweep for AEGIS and two seeds.
const smallSpec = `name: small
description: Small test
server: a100-40gb:2
traces:
  - like: philly
    jobs: 8
    seed: 1
  - like: venus
    jobs: 8
    seed: 2
seeds: [1, 2]
configs:
  - label: Exclusive
    policy: exclusive
    sweep: false
  - label: AEGIS
    policy: aegis
sweep:
  - param: hold
    values: [10s, 30s]
normalize: Exclusive
table: normalized
`

func loadSmall(t *testing.T, text string) *Plan {
	t.Helper()
	p := filepath.Join(t.TempDir(), "small.yaml")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	s, err := LoadPlan(p)
	require.NoError(t, err)
	return s
}

// files reads every file under dir by relative path.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	}))
	return out
}

func TestRunPlanSameBytesAnyJobs(t *testing.T) {
	s := loadSmall(t, smallSpec)
	a, b := t.TempDir(), t.TempDir()
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: a, Jobs: 1})
	require.NoError(t, err)
	require.Equal(t, 2*(2+4), rep.Cells)
	require.Equal(t, rep.Cells, rep.Ran)
	_, err = RunPlan(context.Background(), s, RunOptions{Out: b, Jobs: 8})
	require.NoError(t, err)
	fa, fb := files(t, a), files(t, b)
	require.Equal(t, fa, fb)
	for _, f := range []string{"run.json", "cells.csv", "jobs.csv", "normalized.csv", "table.md", "table.csv", "table.tex",
		"cells/philly-8-s1.AEGIS.hold=30s.s2/events.jsonl", "cells/venus-8-s2.Exclusive.s1/cell.json"} {
		require.Contains(t, fa, f)
	}
	// Every combined row carries its cell's labels.
	require.True(t, strings.HasPrefix(fa["cells.csv"], "spec,trace,config,policy,seed,hold,makespan_s,"))
	require.Contains(t, fa["cells.csv"], "\nsmall,venus-8-s2,AEGIS,aegis,2,30s,")
	require.Contains(t, fa["jobs.csv"], "\nsmall,philly-8-s1,Exclusive,exclusive,1,,")
	require.Contains(t, fa["normalized.csv"], "\nsmall,geomean,AEGIS,aegis,1,10s,")
	require.Contains(t, fa["normalized.csv"], ",recovered_attempts,normalized_to\n", "normalized.csv names its baseline")
	require.True(t, strings.HasSuffix(fa["normalized.csv"], ",Exclusive\n"))
	require.Contains(t, fa["table.md"], "| AEGIS | 30s |")
	require.Contains(t, fa["table.md"], "; GeoMean over traces philly-8-s1, venus-8-s2 of each metric normalized to Exclusive;")
	require.Contains(t, fa["run.json"], `"spec_hash": "`+s.Hash()+`"`)
	require.Contains(t, fa["run.json"], `"interference_sha256"`)
}

func TestRunPlanSkipsDoneCells(t *testing.T) {
	s := loadSmall(t, smallSpec)
	dir := t.TempDir()
	_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	// A tampered cell shows that a rerun skips it...
	sum := filepath.Join(dir, "cells", "philly-8-s1.AEGIS.hold=10s.s1", "summary.csv")
	orig, err := os.ReadFile(sum)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(sum, []byte(strings.Replace(string(orig), "\n", "\n9", 1)), 0o644))
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Equal(t, rep.Cells, rep.Skipped)
	require.Zero(t, rep.Ran)
	b, _ := os.ReadFile(sum)
	require.NotEqual(t, string(orig), string(b))
	// ...a cell without cell.json (never finished) is run again...
	require.NoError(t, os.Remove(filepath.Join(dir, "cells", "venus-8-s2.AEGIS.hold=30s.s2", rundir.CellFile)))
	rep, err = RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Ran)
	// ...--force redoes all, and a reworded spec reruns none (TestCellKeys
	// covers what does rerun a cell).
	rep, err = RunPlan(context.Background(), s, RunOptions{Out: dir, Force: true})
	require.NoError(t, err)
	require.Equal(t, rep.Cells, rep.Ran)
	b, _ = os.ReadFile(sum)
	require.Equal(t, string(orig), string(b))
	s2 := loadSmall(t, strings.Replace(smallSpec, "Small test", "Small test, reworded", 1))
	rep, err = RunPlan(context.Background(), s2, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Equal(t, rep.Cells, rep.Skipped)
}

func TestShardsMergeToTheWholeRun(t *testing.T) {
	s := loadSmall(t, smallSpec)
	whole := t.TempDir()
	_, err := RunPlan(context.Background(), s, RunOptions{Out: whole})
	require.NoError(t, err)
	root := t.TempDir()
	var parts []string
	total := 0
	for i := range 3 {
		p := filepath.Join(root, "part"+string(rune('0'+i)))
		rep, err := RunPlan(context.Background(), s, RunOptions{Out: p, Shard: i, Shards: 3})
		require.NoError(t, err)
		total += rep.Cells
		_, err = os.Stat(filepath.Join(p, "cells.csv"))
		require.ErrorIs(t, err, fs.ErrNotExist, "a shard writes no combined files")
		parts = append(parts, p)
	}
	require.Equal(t, len(s.Cells()), total)
	_, err = Merge(parts[:2], filepath.Join(root, "bad"))
	require.ErrorContains(t, err, "cells missing")
	_, err = Merge([]string{parts[0], parts[0]}, filepath.Join(root, "bad"))
	require.ErrorContains(t, err, "is in both")
	other := t.TempDir()
	_, err = RunPlan(context.Background(), loadSmall(t, strings.Replace(smallSpec, "seeds: [1, 2]", "seeds: [1, 3]", 1)), RunOptions{Out: other, Shard: 0, Shards: 3})
	require.NoError(t, err)
	_, err = Merge([]string{parts[0], other}, filepath.Join(root, "bad"))
	require.ErrorContains(t, err, "not shards of the same spec")
	all := filepath.Join(root, "all")
	_, err = Merge(parts, all)
	require.NoError(t, err)
	require.Equal(t, files(t, whole), files(t, all))
	// A rerun replaces the output whole; a folder of other files is refused.
	require.NoError(t, os.WriteFile(filepath.Join(all, "stale.csv"), nil, 0o644))
	_, err = Merge(parts, all)
	require.NoError(t, err)
	require.Equal(t, files(t, whole), files(t, all))
	require.NoError(t, os.WriteFile(filepath.Join(all, "notes.txt"), nil, 0o644))
	_, err = Merge(parts, all)
	require.ErrorContains(t, err, "holds notes.txt, which this command does not write")
	require.FileExists(t, filepath.Join(all, rundir.RunFile))
}

// Merge refuses shards of another build or with other inputs, and damaged
// cells, leaving no output behind.
func TestMergeRefuses(t *testing.T) {
	s := loadSmall(t, smallSpec)
	root := t.TempDir()
	var parts []string
	for i := range 2 {
		p := filepath.Join(root, "part"+string(rune('0'+i)))
		_, err := RunPlan(context.Background(), s, RunOptions{Out: p, Shard: i, Shards: 2, Build: "b1"})
		require.NoError(t, err)
		parts = append(parts, p)
	}
	other := filepath.Join(root, "other")
	_, err := RunPlan(context.Background(), s, RunOptions{Out: other, Shard: 1, Shards: 2, Build: "b2"})
	require.NoError(t, err)
	cell := func(dir, name string) string { // a file of dir's first cell
		ents, err := os.ReadDir(filepath.Join(dir, "cells"))
		require.NoError(t, err)
		return filepath.Join(dir, "cells", ents[0].Name(), name)
	}
	damage := func(p string, f func(b []byte) []byte) func(t *testing.T) []string {
		return func(t *testing.T) []string {
			cp := filepath.Join(t.TempDir(), "part1")
			require.NoError(t, os.CopyFS(cp, os.DirFS(parts[1])))
			q := strings.Replace(p, parts[1], cp, 1)
			b, err := os.ReadFile(q)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(q, f(b), 0o644))
			return []string{parts[0], cp}
		}
	}
	half := func(b []byte) []byte { return b[:len(b)/2] }
	for _, tc := range []struct {
		name   string
		shards func(t *testing.T) []string
		want   string
	}{
		{"another build", func(*testing.T) []string { return []string{parts[0], other} }, "not shards of the same build"},
		{"a cell of another build", damage(cell(parts[1], rundir.CellFile), func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"key": "`, `"key": "0`, 1))
		}), "the cell was made by another build or with other inputs"},
		{"a cut cell.json", damage(cell(parts[1], rundir.CellFile), half), "damaged"},
		{"a cut summary.csv", damage(cell(parts[1], "summary.csv"), half), "summary.csv"},
		// The error names the shard's file, not the merge's temporary copy
		// (".m.tmp-N/cells/ID/jobs.csv: record on line 3: ...").
		{"a cut jobs.csv", damage(cell(parts[1], "jobs.csv"), half), "part1" + string(filepath.Separator) + "cells"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "m")
			_, err := Merge(tc.shards(t), out)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), ".tmp-", "the temporary directory named")
			require.NoDirExists(t, out, "a refused merge leaves nothing")
			ents, err := os.ReadDir(filepath.Dir(out))
			require.NoError(t, err)
			require.Empty(t, ents, "temporary directories left behind")
		})
	}
	_, err = Merge(parts, filepath.Join(root, "m"))
	require.NoError(t, err)
}

func TestRunPlanInterrupted(t *testing.T) {
	s := loadSmall(t, smallSpec)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := RunPlan(ctx, s, RunOptions{Out: dir, Jobs: 1, Progress: func(done, total int) {
		if n++; n == 3 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	ents, err := os.ReadDir(filepath.Join(dir, "cells"))
	require.NoError(t, err)
	require.NotEmpty(t, ents)
	require.Less(t, len(ents), len(s.Cells()))
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), "."), "a temporary directory was left: %s", e.Name())
		require.FileExists(t, filepath.Join(dir, "cells", e.Name(), rundir.CellFile))
	}
	require.NoFileExists(t, filepath.Join(dir, rundir.RunFile))
	rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	require.Equal(t, len(ents), rep.Skipped)
}

// reduced shrinks a loaded spec for a quick end-to-end run: its first seed,
// the first jobs of each trace, the first values of each sweep axis.
func reduced(s *Plan, jobs, values int) {
	s.Seeds = s.Seeds[:min(2, len(s.Seeds))] // two show the seeds' spread
	if tp, ok := s.p.(*tracePlan); ok {
		if mu := s.ModelUncertainty; mu != nil {
			mu.Refits = min(mu.Refits, 2) // two show the models' spread
			tp.refits = tp.refits[:mu.Refits]
		}
		for i, t := range tp.trs {
			cp := *t
			cp.Jobs = t.Jobs[:min(jobs, len(t.Jobs))]
			cp.Lines = nil
			tp.trs[i] = &cp
		}
	}
	for i := range s.Sweep {
		ax := &s.Sweep[i]
		if len(ax.Product) > 0 {
			for k := range ax.Product {
				ax.Product[k] = ax.Product[k][:min(values, len(ax.Product[k]))]
			}
		} else {
			ax.Values = ax.Values[:min(values, len(ax.Values))]
		}
	}
}

// TestShippedSpecs runs a reduced version of every shipped spec end to end.
func TestShippedSpecs(t *testing.T) {
	paths, err := filepath.Glob("*.yaml") // this package's directory is experiments/
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			s, err := LoadPlan(p)
			if errors.Is(err, ErrNoSharedData) {
				t.Skipf("no shared data folder (set AEGIS_SHARED): %v", err)
			}
			require.NoError(t, err)
			require.Equal(t, strings.TrimSuffix(filepath.Base(p), ".yaml"), s.Name, "a shipped spec is named after its file")
			reduced(s, 6, 2)
			dir := t.TempDir()
			rep, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
			require.NoError(t, err)
			require.Equal(t, rep.Cells, rep.Ran)
			require.FileExists(t, filepath.Join(dir, rundir.RunFile))
			require.Empty(t, absolutePaths(t, mustReadString(t, filepath.Join(dir, rundir.RunFile))), "run.json names data by relative paths")
			if s.Stacking != nil {
				b := mustReadString(t, filepath.Join(dir, "thresholds.csv"))
				require.True(t, strings.HasPrefix(b, strings.Join(StackingColumns, ",")+"\n"))
				require.Equal(t, 1, strings.Count(b, ",1\n"), "one knee")
				return
			}
			require.FileExists(t, filepath.Join(dir, "cells.csv"))
			if s.Stability {
				// The anchored windows see the recorded samples: some error
				// against the reference is positive.
				b := mustReadString(t, filepath.Join(dir, "stability.csv"))
				require.Regexp(t, `\n10,smact,0\.0*[1-9]`, b)
			}
			for _, f := range s.Figures {
				require.FileExists(t, filepath.Join(dir, f+".svg"))
			}
			if s.Normalize != "" {
				require.FileExists(t, filepath.Join(dir, "normalized.csv"))
			}
			if s.Table != "" {
				for _, f := range []string{"table.md", "table.csv", "table.tex"} {
					require.FileExists(t, filepath.Join(dir, f))
				}
				if s.ModelUncertainty != nil {
					require.FileExists(t, filepath.Join(dir, "refits.csv"))
					require.Contains(t, mustReadString(t, filepath.Join(dir, "table.csv")), "_model")
				}
			}
		})
	}
}

func mustReadString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

func TestKnee(t *testing.T) {
	require.Equal(t, -1, knee(nil))
	rows := []stackRow{
		{Gain: 1.0, Mean: 1.0}, // serial: no gain, no slowdown
		{Gain: 1.8, Mean: 1.1}, // most of the gain for little slowdown: the knee
		{Gain: 1.9, Mean: 1.5},
		{Gain: 2.0, Mean: 2.0}, // everything admitted
	}
	require.Equal(t, 1, knee(rows))
	require.Equal(t, 0, knee(rows[:1]), "one point is its own knee")
}

func TestBadStackingSpecs(t *testing.T) {
	if _, ok := stacking.DefaultDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the stacking data set is not here")
	}
	const base = "name: f\nserver: a100-40gb:1\nstacking: {}\nseeds: [1]\nsweep: [{param: thresholds, values: [\"0.65,0.35,0.5\"]}]\n"
	for _, tc := range []struct{ name, spec, want string }{
		{"two GPUs", strings.Replace(base, "a100-40gb:1", "a100-40gb:2", 1), "f.yaml:2: server: the stacking protocol runs on one GPU"},
		{"with traces", base + "traces: [{trace: demo}]\n", "f.yaml:6: traces: a stacking spec replays sequences; it has no traces"},
		{"unknown sequence", strings.Replace(base, "stacking: {}", "stacking: {sequences: [nope]}", 1), `f.yaml:3: stacking.sequences[0]: unknown sequence "nope"`},
		{"bad thresholds", strings.Replace(base, "0.65,0.35,0.5", "0.65,0.35", 1), `f.yaml:5: sweep[0]: thresholds="0.65,0.35": want τ1,τ2,τ3`},
		{"policy param", strings.Replace(base, "param: thresholds", "param: hold", 1), `f.yaml:5: sweep[0].param: "hold": a stacking sweep sets thresholds`},
		{"missing data", strings.Replace(base, "stacking: {}", "stacking: {data: nowhere}", 1), "f.yaml:3: stacking.data:"},
		{"sweep figure", base + "sweep_figures: [{x: thresholds.1}]\n", "f.yaml:6: sweep_figures: a stacking spec draws the thresholds figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec), "f.yaml")
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPaperResultsCurrent reruns Table 2's spec and compares its table with
// the committed results/paper/table2 (shown in the README): a change of the
// simulator's outputs needs make reproduce.
func TestPaperResultsCurrent(t *testing.T) {
	s, err := LoadPlan("table2.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	got := mustReadString(t, filepath.Join(dir, "table.md"))
	want := mustReadString(t, filepath.Join("..", "results", "paper", "table2", "table.md"))
	require.Equal(t, want, got, "results/paper is out of date: run make reproduce (and make docs-tables)")
}

// A spec's trace file is found relative to the spec, and its per-job
// lengths (solo_s) reach the results.
func TestSpecTraceFileWithSoloS(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tr"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tr", "short.csv"), []byte(
		"submit_offset_s,workload_id,num_gpus,job_id,solo_s\n0,resnet18_cifar100_bs128_20e_1gpu,1,a,60\n5,resnet18_cifar100_bs128_20e_1gpu,1,b,\n"), 0o644))
	spec := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(spec, []byte("name: s\nserver: a100-40gb:1\ntraces: [{trace: tr/short.csv}]\nseeds: [1]\n"+
		"configs: [{label: E, policy: exclusive, truth: {startup_jitter: 0}}]\n"), 0o644))
	s, err := LoadPlan(spec)
	require.NoError(t, err)
	require.Equal(t, "short", s.Traces[0].Name)
	out := filepath.Join(dir, "out")
	_, err = RunPlan(context.Background(), s, RunOptions{Out: out})
	require.NoError(t, err)
	jobs := mustReadString(t, filepath.Join(out, "jobs.csv"))
	require.Contains(t, jobs, "\ns,short,E,exclusive,1,a,resnet18_cifar100_bs128_20e_1gpu,1,done,0.000,0.000,60.000,")
	require.Contains(t, jobs, "\ns,short,E,exclusive,1,b,resnet18_cifar100_bs128_20e_1gpu,1,done,5.000,60.000,")
}

// A config that sets a parameter a sweep varies gets a warning (the swept
// values replace it in every cell); one that does not sweep, or a spec
// without the overlap, gets none.
func TestSpecWarnsSweptParameterSet(t *testing.T) {
	require.Empty(t, loadSmall(t, smallSpec).Warnings())
	s := loadSmall(t, strings.Replace(smallSpec, "    policy: aegis\n", "    policy: aegis\n    params: {hold: 5s}\n", 1))
	require.Equal(t, []string{"spec small: configs[1] (AEGIS) sets params.hold=5s, but sweep[0] varies hold: the swept values replace it in every cell (set sweep: false on the config to run it once as given)"}, s.Warnings())
	s = loadSmall(t, strings.Replace(strings.Replace(smallSpec, "    policy: aegis\n", "    policy: aegis\n    truth: {noise: '0.1'}\n", 1),
		"  - param: hold\n", "  - param: truth.noise\n    values: ['0', '0.2']\n  - param: hold\n", 1))
	require.Len(t, s.Warnings(), 1)
	require.Contains(t, s.Warnings()[0], "sets truth.noise=0.1, but sweep[0] varies truth.noise")
}

// A rerun by the same build keeps the commit run.json names (committed
// results rerun at a later commit of the same source stay byte-identical);
// a rerun by another build names its own.
func TestRunPlanKeepsCommitOfSameBuild(t *testing.T) {
	s := loadSmall(t, smallSpec)
	dir := t.TempDir()
	_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	run := filepath.Join(dir, rundir.RunFile)
	m, err := ReadMeta(dir)
	require.NoError(t, err)
	setTool := func(commit, build string) {
		b := mustReadString(t, run)
		b = strings.Replace(b, `"commit": "`+m.Tool.Commit+`"`, `"commit": "`+commit+`"`, 1)
		b = strings.Replace(b, `"build_sha256": "`+m.Tool.Build+`"`, `"build_sha256": "`+build+`"`, 1)
		require.NoError(t, os.WriteFile(run, []byte(b), 0o644))
		m.Tool.Commit, m.Tool.Build = commit, build
	}
	build := m.Tool.Build
	for _, tc := range []struct {
		commit, build, want string
	}{
		{"abc1234", build, "abc1234"},
		{"abc1234-dirty", build, m.Tool.Commit},
		{"abc1234", "another build", m.Tool.Commit},
	} {
		setTool(tc.commit, tc.build)
		want := mustReadString(t, run)
		_, err := RunPlan(context.Background(), s, RunOptions{Out: dir})
		require.NoError(t, err)
		got, err := ReadMeta(dir)
		require.NoError(t, err)
		require.Equal(t, tc.want, got.Tool.Commit, "run.json naming %s of build %s", tc.commit, tc.build)
		if tc.want == tc.commit {
			require.Equal(t, want, mustReadString(t, run))
		}
		m.Tool = got.Tool
	}
}

// A stacking run's combined file is made again from run.json alone (what
// Merge and aegis run --finish do): the spec read back picks the stacking
// plan without being resolved.
func TestStackingCombineFromRunJSON(t *testing.T) {
	if _, ok := stacking.DefaultDir(); !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the stacking data set is not here")
	}
	s, err := ParsePlan([]byte("name: f\nserver: a100-40gb:1\nstacking: {}\nseeds: [1]\nsweep: [{param: thresholds, values: [\"0.65,0.35,0.5\", \"0.8,0.35,0.5\"]}]\n"), "f.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = RunPlan(context.Background(), s, RunOptions{Out: dir})
	require.NoError(t, err)
	want := mustReadString(t, filepath.Join(dir, rundir.Thresholds))
	require.NoError(t, os.Remove(filepath.Join(dir, rundir.Thresholds)))
	m, err := ReadMeta(dir)
	require.NoError(t, err)
	_, err = Combine(dir, m)
	require.NoError(t, err)
	require.Equal(t, want, mustReadString(t, filepath.Join(dir, rundir.Thresholds)))
}
