package traces

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReadCSV(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Job
		lines    []int
		err      string
	}{
		{name: "ours", in: "submit_offset_s,workload_id,num_gpus,job_id\n0,a,1,j0\n2.5,b,2,j1\n",
			want: []Job{{ID: "j0", Workload: "a", GPUs: 1}, {ID: "j1", Submit: 2500 * time.Millisecond, Workload: "b", GPUs: 2}}, lines: []int{2, 3}},
		{name: "no ids, unsorted, extra column", in: "num_gpus,submit_offset_s,workload_id,note\n1,5,a,x\n1,1,b,y\n",
			want: []Job{{ID: "1", Submit: time.Second, Workload: "b", GPUs: 1}, {ID: "0", Submit: 5 * time.Second, Workload: "a", GPUs: 1}}, lines: []int{3, 2}},
		{name: "empty", in: "", err: "empty trace"},
		{name: "no jobs", in: "submit_offset_s,workload_id,num_gpus\n", err: "no jobs"},
		{name: "missing column", in: "submit_offset_s,workload_id\n0,a\n", err: `t.csv:1: header lacks column "num_gpus"`},
		{name: "bad time", in: "submit_offset_s,workload_id,num_gpus\n-1,a,1\n", err: "t.csv:2: column submit_offset_s"},
		{name: "bad gpus", in: "submit_offset_s,workload_id,num_gpus\n0,a,1\n0,a,zero\n", err: "t.csv:3: column num_gpus"},
		{name: "empty workload", in: "submit_offset_s,workload_id,num_gpus\n0,,1\n", err: "t.csv:2: column workload_id"},
		{name: "short row", in: "submit_offset_s,num_gpus,workload_id\n0,1\n", err: "t.csv:2: column workload_id: missing"},
		{name: "dup id", in: "submit_offset_s,workload_id,num_gpus,job_id\n0,a,1,x\n0,a,1,x\n", err: "t.csv:3: column job_id"},
		{name: "column twice", in: "submit_offset_s,workload_id,num_gpus,submit_offset_s\n0,a,1,5\n", err: `t.csv:1: header names column "submit_offset_s" twice (columns 1 and 4)`},
		{name: "long row", in: "submit_offset_s,workload_id,num_gpus\n0,a,1\n0,a,1,x\n", err: "t.csv:3: row has 4 fields, the header 3"},
		{name: "solo_s, blank means the workload's", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,120\n1,b,1,\n2,c,1,0.5\n",
			want: []Job{{ID: "0", Workload: "a", GPUs: 1, SoloS: 120}, {ID: "1", Submit: time.Second, Workload: "b", GPUs: 1},
				{ID: "2", Submit: 2 * time.Second, Workload: "c", GPUs: 1, SoloS: 0.5}}, lines: []int{2, 3, 4}},
		{name: "solo_s zero", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,0\n", err: `t.csv:2: column solo_s: "0" is not a positive`},
		{name: "solo_s negative", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,5\n0,a,1,-3\n", err: `t.csv:3: column solo_s: "-3"`},
		{name: "solo_s NaN", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,NaN\n", err: `t.csv:2: column solo_s: "NaN"`},
		{name: "solo_s Inf", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,+Inf\n", err: `t.csv:2: column solo_s: "+Inf"`},
		{name: "solo_s too long", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,2e9\n", err: `t.csv:2: column solo_s: "2e9"`},
		{name: "solo_s text", in: "submit_offset_s,workload_id,num_gpus,solo_s\n0,a,1,long\n", err: `t.csv:2: column solo_s: "long"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := ReadCSV(strings.NewReader(tc.in), "t.csv")
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, tr.Jobs)
			require.Equal(t, tc.lines, tr.Lines)
			var buf bytes.Buffer
			require.NoError(t, WriteCSV(&buf, tr))
			back, err := ReadCSV(&buf, "t.csv")
			require.NoError(t, err)
			require.Equal(t, tr.Jobs, back.Jobs)
		})
	}
}
