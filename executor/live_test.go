package executor

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/traces"
)

func TestReadLive(t *testing.T) {
	in := "submit_offset_s,workload_id,num_gpus,job_id,solo_s\n" +
		"0,mnist_bs32_1gpu,1,a,\n" +
		"\n" +
		"x,mnist_bs32_1gpu,1,b,\n" +
		"2.5,xlnet,2,c,30\n" +
		"3,w,0,d,\n"
	var log strings.Builder
	var got []traces.Job
	for sp := range ReadLive(strings.NewReader(in), "stdin", &log) {
		got = append(got, sp)
	}
	require.Equal(t, []traces.Job{
		{ID: "a", Workload: "mnist_bs32_1gpu", GPUs: 1},
		{ID: "c", Workload: "xlnet", GPUs: 2, Submit: 2500 * time.Millisecond, SoloS: 30},
	}, got)
	require.Contains(t, log.String(), "stdin:4: column submit_offset_s")
	require.Contains(t, log.String(), "stdin:6: column num_gpus")

	log.Reset()
	for range ReadLive(strings.NewReader("a,b\n0,w,1\n"), "stdin", &log) {
		t.Fatal("no header, no jobs")
	}
	require.Contains(t, log.String(), "stdin:1: header")
}

func FuzzReadLive(f *testing.F) {
	f.Add("submit_offset_s,workload_id,num_gpus\n0,w,1\n")
	f.Add("num_gpus,workload_id,submit_offset_s,solo_s\n1,w,5,1e9\n")
	f.Fuzz(func(t *testing.T, in string) {
		var log strings.Builder
		for sp := range ReadLive(strings.NewReader(in), "f", &log) {
			if sp.GPUs < 1 || sp.Submit < 0 || sp.Workload == "" || sp.ID == "" {
				t.Fatalf("bad job accepted: %+v", sp)
			}
		}
	})
}
