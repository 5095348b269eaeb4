package stacking

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

// seq is a four-job sequence of embedded-catalog workloads, as the
// protocol's measured ones are built (CIFAR runs, a truncated ImageNet one).
func seq() Sequence {
	return Sequence{Name: "t", Jobs: []Job{
		{Position: 1, Run: "a", Workload: "mobilenet_cifar100_bs64_20e_1gpu", SoloS: 447},
		{Position: 2, Run: "b", Workload: "resnet18_cifar100_bs32_20e_1gpu", SoloS: 475},
		{Position: 3, Run: "c", Workload: "xception_imagenet_bs32_1gpu", SoloS: 160},
		{Position: 4, Run: "d", Workload: "efficientnet_imagenet_bs64_1gpu", SoloS: 170},
	}}
}

func TestReplayNoFilterLaunchesOnTheProtocolsGaps(t *testing.T) {
	r, err := Replay(seq(), Config{NoFilter: true, Seed: 3})
	require.NoError(t, err)
	require.Zero(t, r.FirstRejected)
	require.Zero(t, r.Deferrals)
	require.Equal(t, time.Duration(0), r.Jobs[0].Start, "the first job starts at once")
	for k := 1; k < len(r.Jobs); k++ {
		gap := r.Jobs[k].Start - r.Jobs[k-1].Active
		require.GreaterOrEqual(t, gap, Gap, "position %d", k+1)
		require.Less(t, gap, Gap+time.Second, "position %d: retried each second", k+1)
		require.True(t, r.Jobs[k].Probed)
		require.Equal(t, k, r.Jobs[k].Running)
	}
	require.False(t, r.Jobs[0].Probed, "the first job finds the GPU idle")
	var sum float64
	for _, j := range r.Jobs {
		require.InDelta(t, (j.Finish-j.Start).Seconds()/j.SoloS, j.Slowdown, 1e-12)
		require.Greater(t, j.Slowdown, 1.0, "co-located jobs slow down")
		sum += j.Slowdown
	}
	require.InDelta(t, sum/4, r.MeanSlowdown, 1e-12)
}

func TestReplaySoloTimesFromTheSequence(t *testing.T) {
	s := Sequence{Name: "one", Jobs: []Job{{Position: 1, Run: "x", Workload: "xception_imagenet_bs32_1gpu", SoloS: 123.5}}}
	r, err := Replay(s, Config{NoFilter: true})
	require.NoError(t, err)
	require.InDelta(t, 123.5, r.MakespanS, 1e-6)
	require.InDelta(t, 1, r.Jobs[0].Slowdown, 1e-9)
}

func TestReplayZeroThresholdsSerialize(t *testing.T) {
	r, err := Replay(seq(), Config{Seed: 3})
	require.NoError(t, err)
	require.Equal(t, 2, r.FirstRejected)
	for k := 1; k < len(r.Jobs); k++ {
		require.GreaterOrEqual(t, r.Jobs[k].Start, r.Jobs[k-1].Finish, "one job at a time")
		require.Less(t, r.Jobs[k].Start-r.Jobs[k-1].Finish, time.Second)
		require.Positive(t, r.Jobs[k].Deferrals)
		// Rejected once per second from the hold's end to the previous
		// job's exit.
		wait := (r.Jobs[k-1].Finish - r.Jobs[k-1].Active - Gap).Seconds()
		require.InDelta(t, wait, float64(r.Jobs[k].Deferrals), 2)
	}
	for _, j := range r.Jobs {
		require.InDelta(t, 1, j.Slowdown, 1e-6)
	}
}

// FirstRejectedAt on a no-filter replay predicts the filtered replay's
// first rejection exactly, for thresholds around every probed score.
func TestFirstRejectedAtMatchesReplay(t *testing.T) {
	nf, err := Replay(seq(), Config{NoFilter: true, Seed: 5})
	require.NoError(t, err)
	var ths [][3]float64
	for _, j := range nf.Jobs[1:] {
		s := j.Scores
		ths = append(ths, [3]float64{s[0], s[1], 1.1}, [3]float64{s[0] + 1e-9, s[1], s[2]},
			[3]float64{s[0], 1.1, s[2]}, [3]float64{s[0], 1.1, s[2] + 1e-9})
	}
	seen := map[int]bool{}
	for _, th := range ths {
		r, err := Replay(seq(), Config{Thresholds: th, Seed: 5})
		require.NoError(t, err)
		require.Equal(t, r.FirstRejected, nf.FirstRejectedAt(th), "thresholds %v", th)
		seen[r.FirstRejected] = true
		if r.FirstRejected > 0 {
			// Up to the rejection, the filtered run is the no-filter one.
			for k := 0; k < r.FirstRejected-1; k++ {
				require.Equal(t, nf.Jobs[k].Start, r.Jobs[k].Start)
			}
		}
	}
	require.GreaterOrEqual(t, len(seen), 3, "thresholds reject at different positions")
}

func TestRejects(t *testing.T) {
	for _, c := range []struct {
		s, th [3]float64
		want  bool
	}{
		{[3]float64{0.7, 0.4, 0}, [3]float64{0.65, 0.35, 0.5}, true},
		{[3]float64{0.7, 0.3, 0.5}, [3]float64{0.65, 0.35, 0.5}, true},
		{[3]float64{0.7, 0.3, 0.4}, [3]float64{0.65, 0.35, 0.5}, false},
		{[3]float64{0.6, 1, 1}, [3]float64{0.65, 0.35, 0.5}, false},
		{[3]float64{0, 0, 0}, [3]float64{0, 0, 0}, true},
	} {
		require.Equal(t, c.want, Rejects(c.s, c.th), "%v %v", c.s, c.th)
	}
}

func TestSequenceCatalogErrors(t *testing.T) {
	for _, c := range []struct {
		jobs []Job
		want string
	}{
		{[]Job{{Position: 1, Workload: "nope", SoloS: 1}}, `workload "nope" is not in the catalog`},
		{[]Job{{Position: 1, Workload: "xception_imagenet_bs32_1gpu", SoloS: 1}, {Position: 2, Workload: "xception_imagenet_bs32_1gpu", SoloS: 1}}, "appears twice"},
	} {
		_, err := Replay(Sequence{Name: "s", Jobs: c.jobs}, Config{NoFilter: true})
		require.ErrorContains(t, err, c.want)
	}
	_, err := Replay(Sequence{Name: "s"}, Config{})
	require.ErrorContains(t, err, "no jobs")
	multi := ""
	for _, id := range models.A100().IDs() {
		if w, _ := models.A100().Get(id); w.GPUs > 1 {
			multi = id
			break
		}
	}
	require.NotEmpty(t, multi)
	_, err = Replay(Sequence{Name: "s", Jobs: []Job{{Position: 1, Workload: multi, SoloS: 10}}}, Config{})
	require.ErrorContains(t, err, "single-GPU")
}

func TestReaders(t *testing.T) {
	const seqHead = "sequence,position,run_name,catalog_id,solo_runtime_s\n"
	s, err := ReadSequences(strings.NewReader(seqHead+"a,1,r1,w1,10\na,2,r2,w2,20.5\nb,1,r3,w1,5\n"), "s.csv")
	require.NoError(t, err)
	require.Len(t, s, 2)
	require.Equal(t, Job{Position: 2, Run: "r2", Workload: "w2", SoloS: 20.5}, s[0].Jobs[1])
	const gridHead = "sequence,tau_smact,tau_smocc,tau_drama,first_rejected_position,deferrals,makespan_s,mean_slowdown,max_slowdown\n"
	g, err := ReadGrid(strings.NewReader(gridHead+"a,0.1,0.2,0.3,,0,10,1.1,1.2\na,0,0,0,2,5,10,1,1\n"), "g.csv")
	require.NoError(t, err)
	require.Equal(t, GridRun{Sequence: "a", Thresholds: [3]float64{0.1, 0.2, 0.3}, MakespanS: 10, MeanSlowdown: 1.1, MaxSlowdown: 1.2}, g[0])
	require.Equal(t, 2, g[1].FirstRejected)
	const tgHead = "sequence,runs,n_runs,jobs,makespan_mean_s,makespan_min_s,makespan_max_s,makespan_sd_s,longest_job_mean_s,mean_slowdown_mean,max_slowdown_mean\n"
	tg, err := ReadTargets(strings.NewReader(tgHead+"a,no_deferral,4,2,100,90,110,5,80,1.2,1.4\n"), "t.csv")
	require.NoError(t, err)
	require.Equal(t, Target{Sequence: "a", Group: "no_deferral", Runs: 4, Jobs: 2, MakespanS: 100, MakespanMinS: 90,
		MakespanMaxS: 110, MakespanSDS: 5, LongestJobS: 80, MeanSlowdown: 1.2, MaxSlowdown: 1.4}, tg[0])

	for _, c := range []struct {
		in, want string
		read     func(string) error
	}{
		{seqHead + "a,2,r,w,1\n", "s.csv:2: column position: sequence a: got 2, want 1", nil},
		{seqHead + "a,1,r,w,-1\n", "s.csv:2: column solo_runtime_s", nil},
		{seqHead + "a,1,r,w,NaN\n", "s.csv:2: column solo_runtime_s", nil},
		{seqHead + "a,1,,w,1\n", "s.csv:2: column run_name: empty", nil},
		{"sequence,position\n", `s.csv: header: missing column "run_name"`, nil},
		{seqHead, "s.csv: no sequences", nil},
		{gridHead + "a,1.5,0,0,,0,1,1,1\n", "g.csv:2: column tau_smact", func(s string) error { _, err := ReadGrid(strings.NewReader(s), "g.csv"); return err }},
		{gridHead + "a,0,0,0,1,3,1,1,1\n", "g.csv:2: column first_rejected_position: 1", func(s string) error { _, err := ReadGrid(strings.NewReader(s), "g.csv"); return err }},
		{gridHead + "a,0,0,0,,3,1,1,1\n", "g.csv:2: columns first_rejected_position and deferrals disagree", func(s string) error { _, err := ReadGrid(strings.NewReader(s), "g.csv"); return err }},
		{gridHead + "a,0,0,0,2,x,1,1,1\n", "g.csv:2: column deferrals", func(s string) error { _, err := ReadGrid(strings.NewReader(s), "g.csv"); return err }},
		{tgHead + "a,nd,0,2,100,90,110,5,80,1.2,1.4\n", "t.csv:2: column n_runs", func(s string) error { _, err := ReadTargets(strings.NewReader(s), "t.csv"); return err }},
	} {
		read := c.read
		if read == nil {
			read = func(s string) error { _, err := ReadSequences(strings.NewReader(s), "s.csv"); return err }
		}
		require.ErrorContains(t, read(c.in), c.want, c.in)
	}
}

func TestLoadSharedData(t *testing.T) {
	dir, ok := DefaultDir()
	if !ok {
		t.Skip("no shared data folder (set AEGIS_SHARED): the calibration data are not here")
	}
	d, err := Load(dir)
	require.NoError(t, err)
	require.Len(t, d.Sequences, 5)
	require.Len(t, d.Targets, 10)
	require.Len(t, d.Grid, 366)
	_, err = Load(t.TempDir())
	require.ErrorContains(t, err, SequencesFile)
}

func FuzzReadSequences(f *testing.F) {
	f.Add("sequence,position,run_name,catalog_id,solo_runtime_s\na,1,r,w,10\n")
	f.Add("sequence,position,run_name,catalog_id,solo_runtime_s\na,1,r,w,1e400\n")
	f.Fuzz(func(t *testing.T, s string) {
		seqs, err := ReadSequences(strings.NewReader(s), "f.csv")
		if err == nil {
			for _, q := range seqs {
				for i, j := range q.Jobs {
					require.Equal(t, i+1, j.Position)
					require.Positive(t, j.SoloS)
				}
			}
		}
	})
}

func FuzzReadGrid(f *testing.F) {
	f.Add("sequence,tau_smact,tau_smocc,tau_drama,first_rejected_position,deferrals,makespan_s,mean_slowdown,max_slowdown\na,0.1,0.2,0.3,,0,10,1.1,1.2\n")
	f.Add("sequence,tau_smact,tau_smocc,tau_drama,first_rejected_position,deferrals,makespan_s,mean_slowdown,max_slowdown\na,0.1,0.2,0.3,3,7,10,1.1,1.2\n")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ReadGrid(strings.NewReader(s), "f.csv")
		if err == nil {
			for _, r := range g {
				require.Equal(t, r.FirstRejected == 0, r.Deferrals == 0)
			}
		}
	})
}

func FuzzReadTargets(f *testing.F) {
	f.Add("sequence,runs,n_runs,jobs,makespan_mean_s,makespan_min_s,makespan_max_s,makespan_sd_s,longest_job_mean_s,mean_slowdown_mean,max_slowdown_mean\na,no_deferral,4,2,100,90,110,5,80,1.2,1.4\n")
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := ReadTargets(strings.NewReader(s), "f.csv")
		if err == nil {
			for _, r := range tg {
				require.Positive(t, r.MakespanS)
			}
		}
	})
}

// BenchmarkReplay measures one no-filter replay of a four-job sequence
// (the unit of the calibration's grid searches).
func BenchmarkReplay(b *testing.B) {
	s := seq()
	for i := 0; b.Loop(); i++ {
		if _, err := Replay(s, Config{NoFilter: true, Seed: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
