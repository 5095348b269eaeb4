package traces

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/aegis-sched/aegis/models"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func TestReadPhillyFixture(t *testing.T) {
	l, err := ReadPhillyFile("testdata/philly/cluster_job_log.json")
	require.NoError(t, err)
	require.Equal(t, 8, l.Records)
	require.Equal(t, map[string]int{SkipNeverStarted: 2, SkipNoEndTime: 1, SkipNoSubmitTime: 1}, l.Skipped)
	require.Equal(t, 4, l.SkippedTotal())
	require.Equal(t, "2 never started, 1 no end time, 1 no submit time", l.SkipSummary())
	require.Equal(t, []LogJob{
		{ID: "application_0006", Submit: 0, Duration: sec(30), GPUs: 2, Status: "Pass"},
		{ID: "application_0001", Submit: sec(67), Duration: sec(19*60 + 17), GPUs: 1, Status: "Pass"},
		// GPUs from the first attempt (2+2), run time first start to last end.
		{ID: "application_0002", Submit: sec(67), Duration: sec(7200), GPUs: 4, Status: "Killed"},
		{ID: "application_0008", Submit: sec(24*60 + 1), Duration: sec(86400), GPUs: 0, Status: "Pass"},
	}, l.Jobs)
	require.Equal(t, len(l.Jobs)+l.SkippedTotal(), l.Records, "no record lost")
}

func TestReadPhillyErrors(t *testing.T) {
	job := func(body string) string {
		return `[{"jobid": "j1", "submitted_time": "2017-10-03 02:56:06", "attempts": [{"start_time": "2017-10-03 02:56:12", "end_time": "2017-10-03 03:00:00", "detail": [{"ip": "m", "gpus": ["g0"]}]}]},` + "\n" + body + "]"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "f.json: empty file"},
		{"not array", `{"jobid": 1}`, "f.json: byte 1: want a JSON array"},
		{"syntax", job(`{"jobid": "j2",,}`), "f.json: byte 203: job 1 (from byte 188): invalid character ','"},
		{"wrong type", job(`{"jobid": "j2", "attempts": "no"}`), "f.json: byte 188: job 1: field attempts: JSON string where []traces.phillyAttempt expected"},
		{"gpus not list", job(`{"jobid": "j2", "attempts": [{"detail": [{"gpus": 3}]}]}`), "field attempts.detail.gpus: JSON number"},
		{"bad submit", job(`{"jobid": "j2", "submitted_time": "yesterday"}`), `f.json: byte 188: job 1 (jobid "j2"): field submitted_time: "yesterday" is not a time`},
		{"bad start", job(`{"jobid": "j2", "submitted_time": "2017-10-03 02:56:06", "attempts": [{"start_time": "2017-13-03 02:56:12"}]}`), `job 1 (jobid "j2"): field attempts[0].start_time: "2017-13-03 02:56:12" is not a time`},
		{"bad middle attempt", job(`{"jobid": "j2", "submitted_time": "2017-10-03 02:56:06", "attempts": [{"start_time": "2017-10-03 02:56:12"}, {"start_time": "x"}, {"end_time": "2017-10-03 05:00:00"}]}`), "field attempts[1].start_time"},
		{"truncated", `[{"jobid": "j1"`, "f.json: byte 15: job 0 (from byte 1): unexpected EOF"},
		{"unclosed", job(`{"jobid": "j2"}`)[:len(job(`{"jobid": "j2"}`))-1], "after job 2: EOF"},
		{"trailing", job(`{"jobid": "j2"}`) + ` [1]`, "data after the job array"},
		{"none ran", `[{"jobid": "j1", "submitted_time": "2017-10-03 02:56:06", "attempts": []}]`, "f.json: no job that ran (1 records; skipped: 1 never started)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadPhilly(strings.NewReader(tc.in), "f.json")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadPhillyEndBeforeStart(t *testing.T) {
	in := `[{"jobid": "a", "submitted_time": "2017-10-03 02:00:00", "attempts": [{"start_time": "2017-10-03 03:00:00", "end_time": "2017-10-03 02:30:00"}]},
	{"jobid": "b", "submitted_time": "2017-10-03 02:00:01", "attempts": [{"start_time": "2017-10-03 03:00:00", "end_time": "2017-10-03 03:00:01"}]}]`
	l, err := ReadPhilly(strings.NewReader(in), "f")
	require.NoError(t, err)
	require.Equal(t, map[string]int{SkipEndBeforeStart: 1}, l.Skipped)
	require.Equal(t, []LogJob{{ID: "b", Duration: time.Second}}, l.Jobs)
}

func TestReadHeliosFixture(t *testing.T) {
	l, err := ReadHeliosFile("testdata/helios/cluster_log.csv")
	require.NoError(t, err)
	require.Equal(t, 7, l.Records)
	require.Equal(t, map[string]int{SkipNeverStarted: 1, SkipNoEndTime: 1}, l.Skipped)
	require.Equal(t, []LogJob{
		{ID: "6000005", Submit: 0, Duration: sec(86400), GPUs: 8, Status: "TIMEOUT"},
		{ID: "6000001", Submit: sec(2), Duration: sec(600), GPUs: 1, Status: "COMPLETED"},
		{ID: "6000002", Submit: sec(2), Duration: sec(3600), GPUs: 2, Status: "FAILED"},
		{ID: "6000003", Submit: sec(4), Duration: sec(10), GPUs: 0, Status: "COMPLETED"},
		// duration empty: end_time − start_time; gpu_num "1.0" is 1.
		{ID: "6000006", Submit: sec(115), Duration: sec(60), GPUs: 1, Status: "COMPLETED"},
	}, l.Jobs)
}

func TestReadHeliosVariants(t *testing.T) {
	// Helios's Philly conversion: no job_id (jobname instead), numeric times.
	in := "user,vc,jobname,gpu_num,state,submit_time,start_time,end_time,duration\n" +
		"u,v,jA,1,Pass,100,110,200,90\n" +
		"u,v,jB,2,Failed,50.5,60,,\n" +
		"u,v,jC,2,Killed,70,80,90,-3\n"
	l, err := ReadHelios(strings.NewReader(in), "p.csv")
	require.NoError(t, err)
	require.Equal(t, map[string]int{SkipNoEndTime: 1, SkipEndBeforeStart: 1}, l.Skipped)
	require.Equal(t, []LogJob{{ID: "jA", Duration: sec(90), GPUs: 1, Status: "Pass"}}, l.Jobs)
}

func TestReadHeliosErrors(t *testing.T) {
	const head = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
	const ok = "1,u,v,1,1,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,2020-04-01 00:10:08,600,1\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "h.csv: empty log"},
		{"no gpu_num", "job_id,submit_time,duration\n1,2020-04-01 00:00:07,5\n", `h.csv:1: header lacks column "gpu_num"`},
		{"no duration", "job_id,gpu_num,submit_time\n1,1,2020-04-01 00:00:07\n", `h.csv:1: header lacks column "duration"`},
		{"gpus", head + ok + "2,u,v,two,1,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,2020-04-01 00:10:08,600,1\n", `h.csv:3: column gpu_num: "two" is not a whole number`},
		{"fractional gpus", head + "2,u,v,1.5,1,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,2020-04-01 00:10:08,600,1\n", `h.csv:2: column gpu_num: "1.5"`},
		{"submit", head + "2,u,v,1,1,1,COMPLETED,01/04/2020,2020-04-01 00:00:08,2020-04-01 00:10:08,600,1\n", `h.csv:2: column submit_time: "01/04/2020" is not a time`},
		{"start", head + "2,u,v,1,1,1,COMPLETED,2020-04-01 00:00:07,soon,2020-04-01 00:10:08,600,1\n", `h.csv:2: column start_time: "soon"`},
		{"end", head + "2,u,v,1,1,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,later,600,1\n", `h.csv:2: column end_time: "later"`},
		{"duration", head + "2,u,v,1,1,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,2020-04-01 00:10:08,10m,1\n", `h.csv:2: column duration: "10m" is not a number`},
		{"short row", head + "2,u,v,1\n", `h.csv:2: column submit_time: missing (row has 4 fields)`},
		{"duplicate id", head + ok + ok, `h.csv:3: column job_id: "1" repeats line 2`},
		{"quote", head + "2,\"u,v,1\n", `h.csv: parse error on line 2, column 10`},
		{"none ran", head + "2,u,v,1,1,1,CANCELLED,2020-04-01 00:00:07,,,0,\n", "h.csv: no job that ran (1 records; skipped: 1 never started)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHelios(strings.NewReader(tc.in), "h.csv")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestLogCSVRoundTrip(t *testing.T) {
	l, err := ReadLogCSV(bytes.NewReader(mustRead(t, "testdata/log.csv")), "log.csv")
	require.NoError(t, err)
	require.Equal(t, 4, l.Records)
	require.Equal(t, []LogJob{
		{ID: "a", Submit: 0, Duration: sec(120), GPUs: 1, Status: "COMPLETED"},
		{ID: "d", Submit: sec(5), Duration: sec(86400), GPUs: 4, Status: "COMPLETED"},
		{ID: "b", Submit: sec(10), Duration: sec(3600.5), GPUs: 2, Status: "FAILED"},
		{ID: "c", Submit: sec(10), Duration: 0, GPUs: 1},
	}, l.Jobs)
	var buf bytes.Buffer
	require.NoError(t, WriteLogCSV(&buf, l.Jobs, nil))
	again, err := ReadLogCSV(&buf, "again")
	require.NoError(t, err)
	require.Equal(t, l.Jobs, again.Jobs)

	// With workloads the file is also a runnable trace.
	buf.Reset()
	wl := []string{"w1", "w4", "w2", "w1"}
	require.NoError(t, WriteLogCSV(&buf, l.Jobs, wl))
	tr, err := ReadCSV(bytes.NewReader(buf.Bytes()), "t")
	require.NoError(t, err)
	require.Equal(t, Job{ID: "d", Submit: sec(5), Workload: "w4", GPUs: 4}, tr.Jobs[1])
	require.ErrorContains(t, WriteLogCSV(&buf, l.Jobs, wl[:1]), "1 workloads for 4 jobs")
}

func TestReadLogCSVErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "l.csv: empty log"},
		{"header", "submit_offset_s,num_gpus\n", `l.csv:1: header lacks column "duration_s"`},
		{"submit", "submit_offset_s,num_gpus,duration_s\n-1,1,1\n", `l.csv:2: column submit_offset_s: "-1"`},
		{"duration", "submit_offset_s,num_gpus,duration_s\n1,1,NaN\n", `l.csv:2: column duration_s: "NaN"`},
		{"gpus", "submit_offset_s,num_gpus,duration_s\n1,x,1\n", `l.csv:2: column num_gpus: "x"`},
		{"dup", "job_id,submit_offset_s,num_gpus,duration_s\na,1,1,1\na,2,1,1\n", `l.csv:3: column job_id: "a" repeats line 2`},
		{"no jobs", "submit_offset_s,num_gpus,duration_s\n", "l.csv: no jobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadLogCSV(strings.NewReader(tc.in), "l.csv")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestJSONL(t *testing.T) {
	tr, err := Load("testdata/trace.jsonl")
	require.NoError(t, err)
	require.Equal(t, []Job{
		{ID: "j0", Submit: 0, Workload: "resnet18_cifar100_bs128_20e_1gpu", GPUs: 1},
		{ID: "2", Submit: sec(3), Workload: "bert_base_wiki_bs32_1gpu", GPUs: 1},
		{ID: "7", Submit: sec(12.5), Workload: "gpt2_large_wiki_bs8_2gpu", GPUs: 2},
	}, tr.Jobs)
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, tr))
	again, err := ReadJSONL(&buf, "again")
	require.NoError(t, err)
	require.Equal(t, tr.Jobs, again.Jobs)

	// The built-in traces round-trip through JSON Lines too.
	philly, err := Load("philly")
	require.NoError(t, err)
	buf.Reset()
	require.NoError(t, WriteJSONL(&buf, philly))
	again, err = ReadJSONL(&buf, "philly.jsonl")
	require.NoError(t, err)
	require.Equal(t, philly.Jobs, again.Jobs)

	// A per-job length round-trips; null or absent means the workload's.
	in := `{"job_id": "a", "submit_offset_s": 0, "workload_id": "w", "num_gpus": 1, "solo_s": 90.5}` + "\n" +
		`{"job_id": "b", "submit_offset_s": 1, "workload_id": "w", "num_gpus": 1, "solo_s": null}` + "\n"
	tr, err = ReadJSONL(strings.NewReader(in), "solo.jsonl")
	require.NoError(t, err)
	require.Equal(t, []Job{{ID: "a", Workload: "w", GPUs: 1, SoloS: 90.5}, {ID: "b", Submit: sec(1), Workload: "w", GPUs: 1}}, tr.Jobs)
	buf.Reset()
	require.NoError(t, WriteJSONL(&buf, tr))
	require.Contains(t, buf.String(), `"solo_s":90.5`)
	require.NotContains(t, strings.Split(buf.String(), "\n")[1], "solo_s")
	again, err = ReadJSONL(&buf, "again")
	require.NoError(t, err)
	require.Equal(t, tr.Jobs, again.Jobs)
}

// A UTF-8 byte order mark before the first line is skipped, as the CSV
// readers skip it.
func TestJSONLByteOrderMark(t *testing.T) {
	tr, err := ReadJSONL(strings.NewReader("\ufeff"+`{"submit_offset_s": 1, "workload_id": "w", "num_gpus": 1}`+"\n"), "bom.jsonl")
	require.NoError(t, err)
	require.Equal(t, []Job{{ID: "0", Submit: sec(1), Workload: "w", GPUs: 1}}, tr.Jobs)
	_, err = ReadJSONL(strings.NewReader(`{"submit_offset_s": 1, "workload_id": "w", "num_gpus": 1}`+"\n\ufeff{}"), "bom.jsonl")
	require.ErrorContains(t, err, "bom.jsonl:2:", "only at the start of the file")
}

func TestReadJSONLErrors(t *testing.T) {
	const ok = `{"submit_offset_s": 0, "workload_id": "w", "num_gpus": 1}` + "\n"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "t.jsonl: no jobs"},
		{"syntax", ok + `{"submit_offset_s": 0,}`, "t.jsonl:2: invalid character '}'"},
		{"type", ok + `{"submit_offset_s": "0", "workload_id": "w", "num_gpus": 1}`, "t.jsonl:2: field submit_offset_s: want a number, got a JSON string"},
		{"missing submit", ok + `{"workload_id": "w", "num_gpus": 1}`, "t.jsonl:2: field submit_offset_s: missing"},
		{"negative submit", `{"submit_offset_s": -2, "workload_id": "w", "num_gpus": 1}`, "t.jsonl:1: field submit_offset_s: -2 is not"},
		{"no workload", `{"submit_offset_s": 2, "num_gpus": 1}`, "t.jsonl:1: field workload_id: missing or empty"},
		{"no gpus", `{"submit_offset_s": 2, "workload_id": "w"}`, "t.jsonl:1: field num_gpus: missing"},
		{"fractional gpus", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1.5}`, "t.jsonl:1: field num_gpus: 1.5 is not a whole number"},
		{"bad id", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "job_id": [1]}`, "t.jsonl:1: field job_id: [1] is neither"},
		{"dup id", `{"job_id": "a", "submit_offset_s": 2, "workload_id": "w", "num_gpus": 1}` + "\n" + `{"job_id": "a", "submit_offset_s": 2, "workload_id": "w", "num_gpus": 1}`, `t.jsonl:2: field job_id: "a" repeats line 1`},
		{"two values", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1} {}`, "t.jsonl:1: more than one JSON value"},
		{"array", `[1]`, "t.jsonl:1: want a JSON object, got a JSON array"},
		{"zero solo_s", ok + `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "solo_s": 0}`, "t.jsonl:2: field solo_s: 0 is not a positive"},
		{"negative solo_s", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "solo_s": -1}`, "t.jsonl:1: field solo_s: -1 is not"},
		{"huge solo_s", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "solo_s": 1e300}`, "t.jsonl:1: field solo_s: 1e+300 is not"},
		{"unknown key", ok + `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "gpus": 2}`, `t.jsonl:2: unknown key "gpus"; valid keys: job_id,`},
		{"string solo_s", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "solo_s": "60"}`, "t.jsonl:1: field solo_s: want a number, got a JSON string"},
		{"key twice", `{"submit_offset_s": 2, "workload_id": "w", "num_gpus": 1, "num_gpus": 2}`, `t.jsonl:1: key "num_gpus" given twice`},
		{"key twice, second line", ok + `{"submit_offset_s": 2, "workload_id": "w", "workload_id": "v", "num_gpus": 1}`, `t.jsonl:2: key "workload_id" given twice`},
		{"a line without end", ok + strings.Repeat(" ", MaxLine+1), "t.jsonl: line 2 is longer than 1048576 bytes, the limit of one line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSONL(limitLines(strings.NewReader(tc.in)), "t.jsonl")
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestReadLogFile(t *testing.T) {
	cat := models.A100()
	dir := t.TempDir()
	tracePath := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(tracePath, []byte("submit_offset_s,workload_id,num_gpus\n0,bert_base_wiki_bs32_1gpu,1\n"), 0o644))
	unknown := filepath.Join(dir, "u.csv")
	require.NoError(t, os.WriteFile(unknown, []byte("submit_offset_s,workload_id,num_gpus\n0,nope,1\n"), 0o644))
	for _, tc := range []struct {
		path   string
		format Format
		jobs   int
		first  LogJob
	}{
		{"testdata/philly/cluster_job_log.json", FormatAuto, 4, LogJob{ID: "application_0006", Duration: sec(30), GPUs: 2, Status: "Pass"}},
		{"testdata/philly/cluster_job_log.json", FormatPhilly, 4, LogJob{ID: "application_0006", Duration: sec(30), GPUs: 2, Status: "Pass"}},
		{"testdata/helios/cluster_log.csv", FormatAuto, 5, LogJob{ID: "6000005", Duration: sec(86400), GPUs: 8, Status: "TIMEOUT"}},
		{"testdata/log.csv", FormatAuto, 4, LogJob{ID: "a", Duration: sec(120), GPUs: 1, Status: "COMPLETED"}},
		{"testdata/trace.jsonl", FormatAuto, 3, LogJob{ID: "j0", Duration: sec(128.09), GPUs: 1}},
		{tracePath, FormatCSV, 1, LogJob{ID: "0", Duration: sec(923.45), GPUs: 1}},
		{"philly", FormatAuto, 60, LogJob{ID: "0", Duration: sec(2945.98), GPUs: 1}},
	} {
		t.Run(tc.path+"/"+string(tc.format), func(t *testing.T) {
			l, err := ReadLogFile(tc.path, tc.format, cat)
			require.NoError(t, err)
			require.Len(t, l.Jobs, tc.jobs)
			require.Equal(t, tc.first, l.Jobs[0])
		})
	}
	_, err := ReadLogFile(filepath.Join(dir, "missing.csv"), FormatAuto, cat)
	require.ErrorContains(t, err, "missing.csv: no such file")
	_, err = ReadLogFile(unknown, FormatAuto, cat)
	require.ErrorContains(t, err, `workload "nope" is not in the catalog`)
	_, err = ReadLogFile("testdata/log.csv", "xml", cat)
	require.ErrorContains(t, err, `unknown format "xml"`)
	_, err = ReadLogFile("testdata/log.csv", FormatPhilly, cat)
	require.ErrorContains(t, err, "testdata/log.csv: byte")
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// checkLog asserts the invariants every reader's result keeps.
func checkLog(t *testing.T, l *Log) {
	t.Helper()
	require.NotEmpty(t, l.Jobs)
	require.Equal(t, l.Records, len(l.Jobs)+l.SkippedTotal(), "records = kept + skipped")
	for i, j := range l.Jobs {
		if j.Duration < 0 || j.GPUs < 0 || j.Submit < 0 || (i > 0 && l.Jobs[i-1].Submit > j.Submit) {
			t.Fatalf("job %d: %+v (previous submitted at %v): negative value or out of order", i, j, l.Jobs[max(i-1, 0)].Submit)
		}
	}
}

func FuzzReadPhilly(f *testing.F) {
	// Small seeds: a new interesting input is minimized before fuzzing goes
	// on, and minimizing the 2 KB fixture took the whole run.
	f.Add([]byte(`[{"status": "Pass", "jobid": "a1", "submitted_time": "2017-10-03 02:56:06",
 "attempts": [{"start_time": "2017-10-03 02:56:12", "end_time": "2017-10-03 03:15:29", "detail": [{"ip": "m1", "gpus": ["g0", "g1"]}]}]},
 {"jobid": "a2", "submitted_time": "2017-10-03 02:57:00", "attempts": []}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"attempts": [{"start_time": null}]}]`))
	f.Add([]byte(`[{"submitted_time": "2017-10-03 02:56:06", "attempts": [{"start_time": "2017-10-03 02:56:06", "end_time": "9999-12-31 23:59:59"}]}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ReadPhilly(bytes.NewReader(b), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz: "), err.Error())
			return
		}
		checkLog(t, l)
	})
}

func FuzzReadHelios(f *testing.F) {
	f.Add(mustRead(f, "testdata/helios/cluster_log.csv"))
	f.Add([]byte("gpu_num,submit_time,start_time,end_time\n1,0,1,3\n"))
	f.Add([]byte("gpu_num,submit_time,duration\n1,2020-04-01 00:00:07,1e9\n2,0001-01-01 00:00:00,0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ReadHelios(bytes.NewReader(b), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz"), err.Error())
			return
		}
		checkLog(t, l)
	})
}

func FuzzReadLogCSV(f *testing.F) {
	f.Add(mustRead(f, "testdata/log.csv"))
	f.Add([]byte("submit_offset_s,num_gpus,duration_s\n1e9,1024,0.000000001\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ReadLogCSV(bytes.NewReader(b), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz"), err.Error())
			return
		}
		checkLog(t, l)
		var buf bytes.Buffer
		require.NoError(t, WriteLogCSV(&buf, l.Jobs, nil))
		again, err := ReadLogCSV(&buf, "again")
		require.NoError(t, err)
		require.Len(t, again.Jobs, len(l.Jobs))
		for i, j := range again.Jobs {
			require.Equal(t, l.Jobs[i].GPUs, j.GPUs)
			require.InDelta(t, l.Jobs[i].Submit.Seconds(), j.Submit.Seconds(), 1e-6)
			require.InDelta(t, l.Jobs[i].Duration.Seconds(), j.Duration.Seconds(), 1e-6)
		}
	})
}

func FuzzReadCSV(f *testing.F) {
	// Small seeds (the built-in traces' first lines): a new interesting
	// input is minimized before fuzzing goes on, which took whole runs with
	// the 3 KB traces as seeds.
	f.Add(firstLines(demoCSV, 4))
	f.Add(firstLines(phillyCSV, 4))
	f.Add([]byte("submit_offset_s,workload_id,num_gpus,job_id\n0,w,1,\" a \"\n"))
	f.Add([]byte("submit_offset_s,workload_id,num_gpus,solo_s\n0,w,1,60\n1,w,1,\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadCSV(bytes.NewReader(b), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz"), err.Error())
			return
		}
		var buf bytes.Buffer
		require.NoError(t, WriteCSV(&buf, tr))
		again, err := ReadCSV(&buf, "again")
		require.NoError(t, err)
		requireSameJobs(t, tr.Jobs, again.Jobs)
	})
}

// firstLines returns the first n lines of b.
func firstLines(b []byte, n int) []byte {
	i := 0
	for range n {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}

func FuzzReadJSONL(f *testing.F) {
	f.Add(mustRead(f, "testdata/trace.jsonl"))
	f.Add([]byte(`{"job_id": 1e400, "submit_offset_s": 1e9, "workload_id": "w", "num_gpus": 1024}`))
	f.Add([]byte(`{"submit_offset_s": 1, "workload_id": "w", "num_gpus": 1, "solo_s": 12.25}`))
	f.Add([]byte("\ufeff" + `{"submit_offset_s": 1, "workload_id": "w", "num_gpus": 1, "num_gpus": 2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadJSONL(bytes.NewReader(b), "fuzz")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "fuzz"), err.Error())
			return
		}
		var buf bytes.Buffer
		require.NoError(t, WriteJSONL(&buf, tr))
		again, err := ReadJSONL(&buf, "again")
		require.NoError(t, err)
		requireSameJobs(t, tr.Jobs, again.Jobs)
	})
}

func requireSameJobs(t *testing.T, want, got []Job) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].ID, got[i].ID)
		require.Equal(t, want[i].Workload, got[i].Workload)
		require.Equal(t, want[i].GPUs, got[i].GPUs)
		require.InDelta(t, want[i].Submit.Seconds(), got[i].Submit.Seconds(), 1e-6)
		require.Equal(t, want[i].SoloS, got[i].SoloS)
	}
}
