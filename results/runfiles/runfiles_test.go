package runfiles

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTableByName(t *testing.T) {
	in := "\ufeffb,a,extra\n1,x,q\n2.5,,r\n"
	tb, err := ParseTable("f.csv", strings.NewReader(in), "a", "b")
	require.NoError(t, err)
	require.Equal(t, 2, tb.Len())
	require.True(t, tb.Has("b"), "a BOM before the first column name is dropped")
	require.Equal(t, "x", tb.String(0, "a"))
	require.Equal(t, "", tb.String(0, "nope"))
	v, err := tb.Float(1, "b")
	require.NoError(t, err)
	require.Equal(t, 2.5, v)
	n, err := tb.OptFloat(1, "a")
	require.NoError(t, err)
	require.True(t, math.IsNaN(n), "an empty cell is NaN for OptFloat")
	require.Equal(t, 3, tb.Line(1))
	require.Equal(t, "f.csv:3", tb.Where(1))
}

func TestParseTableErrors(t *testing.T) {
	tests := []struct {
		name, in string
		required []string
		get      func(*Table) error
		want     []string
	}{
		{"empty file", "", nil, nil, []string{"f.csv: the file is empty"}},
		{"missing column", "a,b\n1,2\n", []string{"a", "c"}, nil, []string{"f.csv:1", `missing column "c"`, "have a,b"}},
		{"duplicate column", "a,a\n1,2\n", nil, nil, []string{"f.csv:1", `header names column "a" twice (columns 1 and 2)`}},
		{"short row", "a,b\n1,2\n3\n", nil, nil, []string{"f.csv:3", "wrong number of fields"}},
		{"bad quote", "a,b\n1,\"2\n", nil, nil, []string{"f.csv:"}},
		{"not a number", "a,b\n1,2\n3,x\n", nil, func(t *Table) error { _, err := t.Float(1, "b"); return err },
			[]string{"f.csv:3", "column b", `"x" is not a finite number`}},
		{"NaN", "a\nNaN\n", nil, func(t *Table) error { _, err := t.Float(0, "a"); return err },
			[]string{"f.csv:2", "column a", "not a finite number"}},
		{"empty needed", "a\n\n\"\"\n", nil, func(t *Table) error { _, err := t.Float(0, "a"); return err },
			[]string{"f.csv:3", "column a", "empty"}},
		{"not an integer", "a\n1.5\n", nil, func(t *Table) error { _, err := t.Int(0, "a"); return err },
			[]string{"f.csv:2", "column a", `"1.5" is not an integer`}},
		{"absent column", "a\n1\n", nil, func(t *Table) error { _, err := t.Float(0, "z"); return err },
			[]string{"f.csv", `missing column "z"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, err := ParseTable("f.csv", strings.NewReader(tc.in), tc.required...)
			if tc.get != nil {
				require.NoError(t, err)
				err = tc.get(tb)
			}
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestParseTelemetry(t *testing.T) {
	in := "t_s,gpu,smact,smocc,drama,util,used_mib,extra\n0,0,0.5,0.2,0.1,60,1024,x\n2,1,1,0.3,0.2,100,2048,y\n"
	tel, err := ParseTelemetry("telemetry.csv", strings.NewReader(in))
	require.NoError(t, err)
	require.Equal(t, 2, tel.GPUs())
	require.Len(t, tel.S[0], 1)
	require.Len(t, tel.S[1], 3, "missing seconds are zero samples")
	require.Equal(t, 0.5, tel.S[0][0].SMACT)
	require.Equal(t, 2048.0, tel.S[1][2].UsedMiB)
	require.Zero(t, tel.S[1][1].SMACT)
}

func TestParseTelemetryErrors(t *testing.T) {
	head := "gpu,t_s,smact,smocc,drama,util,used_mib\n"
	tests := []struct{ name, in, want string }{
		{"missing column", "gpu,t_s,smact\n0,0,1\n", `missing column "smocc"`},
		{"negative gpu", head + "-1,0,0,0,0,0,0\n", "telemetry.csv:2: column gpu: -1 is out of range"},
		{"fractional second", head + "0,1.5,0,0,0,0,0\n", `telemetry.csv:2: column t_s: "1.5" is not an integer`},
		{"huge second", head + "0,99999999999,0,0,0,0,0\n", "column t_s"},
		{"smact above 1", head + "0,0,1.5,0,0,0,0\n", "telemetry.csv:2: column smact: 1.5 is out of range [0, 1]"},
		{"util above 100", head + "0,0,0,0,0,101,0\n", "column util: 101 is out of range"},
		{"negative memory", head + "0,0,0,0,0,0,-3\n", "column used_mib: -3 is out of range"},
		{"duplicate", head + "0,0,0,0,0,0,0\n0,0,0,0,0,0,0\n", "telemetry.csv:3: GPU 0, second 0 appears twice"},
		{"empty value", head + "0,0,,0,0,0,0\n", "telemetry.csv:2: column smact: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTelemetry("telemetry.csv", strings.NewReader(tc.in))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParseEventsAndAttempts(t *testing.T) {
	in := `{"t":0.000,"event":"arrived","job":0}
{"t":0.000,"event":"started","job":0,"attempt":1,"gpus":[1],"shared":false,"new_key":3}

{"t":9.5,"event":"active","job":0,"attempt":1}
{"t":20,"event":"failed","job":0,"attempt":1,"reason":"oom","gpu":1}
{"t":30,"event":"started","job":0,"attempt":2,"gpus":[0,1],"shared":true}
{"t":31,"event":"defer","job":1,"gpu":0,"reason":"hold"}
`
	evs, err := ParseEvents("events.jsonl", strings.NewReader(in))
	require.NoError(t, err)
	require.Len(t, evs, 6)
	require.Equal(t, 4, evs[2].Line)
	require.Equal(t, "hold", evs[5].Reason)
	atts, err := Attempts("events.jsonl", evs)
	require.NoError(t, err)
	require.Equal(t, []Attempt{
		{Job: 0, Attempt: 1, GPUs: []int{1}, Start: 0, Active: 9.5, End: 20, Outcome: "failed"},
		{Job: 0, Attempt: 2, GPUs: []int{0, 1}, Start: 30, Active: -1, End: -1},
	}, atts)
}

func TestParseEventsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", "{\"t\":1,\"event\":\"arrived\",\"job\":0}\nnope\n", "events.jsonl:2:"},
		{"no time", `{"event":"arrived","job":0}`, `events.jsonl:1: missing key "t"`},
		{"no event", `{"t":1,"job":0}`, `events.jsonl:1: missing key "event"`},
		{"no job", `{"t":1,"event":"arrived"}`, `events.jsonl:1: missing key "job"`},
		{"negative time", `{"t":-1,"event":"arrived","job":0}`, `negative time`},
		{"started without gpus", `{"t":1,"event":"started","job":0}`, `events.jsonl:1: started event without "gpus"`},
		{"bad gpu", `{"t":1,"event":"started","job":0,"gpus":[-2]}`, `GPU -2 is out of range`},
		{"wrong type", `{"t":"soon","event":"arrived","job":0}`, "events.jsonl:1:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEvents("events.jsonl", strings.NewReader(tc.in))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// An attempt aegis exec interrupted (place-failed while it ran) ends
// there, and the job's next attempt starts after it (a resumed run's
// events.jsonl: it was "started while an attempt is running"); a
// place-failed launch that never ran ends nothing.
func TestAttemptsInterrupted(t *testing.T) {
	in := `{"t":1,"event":"started","job":0,"attempt":1,"gpus":[0]}
{"t":2,"event":"place-failed","job":0,"gpus":[0],"reason":"attempt 1 interrupted by the executor's shutdown (exit code 143)"}
{"t":3,"event":"place-failed","job":0,"gpus":[1],"reason":"the executor stopped before the attempt's process started"}
{"t":4,"event":"started","job":0,"attempt":2,"gpus":[1]}
{"t":5,"event":"finished","job":0,"attempt":2}`
	evs, err := ParseEvents("e", strings.NewReader(in))
	require.NoError(t, err)
	atts, err := Attempts("e", evs)
	require.NoError(t, err)
	require.Equal(t, []Attempt{
		{Job: 0, Attempt: 1, GPUs: []int{0}, Start: 1, Active: -1, End: 2, Outcome: "interrupted"},
		{Job: 0, Attempt: 2, GPUs: []int{1}, Start: 4, Active: -1, End: 5, Outcome: "finished"},
	}, atts)
}

func TestAttemptsErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"finish without start", `{"t":1,"event":"finished","job":3}`, "e:1: finished event for job 3, which has no running attempt"},
		{"double start", `{"t":1,"event":"started","job":0,"gpus":[0]}` + "\n" + `{"t":2,"event":"started","job":0,"gpus":[0]}`,
			"e:2: job 0 started while an attempt is running"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := ParseEvents("e", strings.NewReader(tc.in))
			require.NoError(t, err)
			_, err = Attempts("e", evs)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func FuzzParseTable(f *testing.F) {
	f.Add("a,b\n1,2\n", "b")
	f.Add("\ufeffwindow_s,signal,wmae\n10,smact,0.1\n", "wmae")
	f.Add("a,a\n", "a")
	f.Fuzz(func(t *testing.T, in, col string) {
		tb, err := ParseTable("f", strings.NewReader(in))
		if err != nil {
			return
		}
		for i := range tb.Len() {
			_, _ = tb.Float(i, col)
			_, _ = tb.Int(i, col)
			_ = tb.String(i, col)
		}
	})
}

func FuzzParseTelemetry(f *testing.F) {
	f.Add("gpu,t_s,smact,smocc,drama,util,used_mib\n0,0,0.5,0.2,0.1,60,1024\n")
	f.Add("gpu,t_s,smact,smocc,drama,util,used_mib\n3,100,1,1,1,100,0\n0,0,0,0,0,0,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		tel, err := ParseTelemetry("f", strings.NewReader(in))
		if err != nil {
			return
		}
		for _, s := range tel.S {
			for _, x := range s {
				if x.SMACT < 0 || x.SMACT > 1 || x.UtilPct > 100 || x.UsedMiB < 0 {
					t.Fatalf("out-of-range sample accepted: %+v", x)
				}
			}
		}
	})
}

func FuzzParseEvents(f *testing.F) {
	f.Add(`{"t":0,"event":"started","job":0,"attempt":1,"gpus":[0]}` + "\n" + `{"t":5,"event":"finished","job":0}`)
	f.Add(`{"t":1,"event":"defer","job":2,"gpu":1,"reason":"pressure"}`)
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := ParseEvents("f", strings.NewReader(in))
		if err != nil {
			return
		}
		_, _ = Attempts("f", evs)
	})
}
