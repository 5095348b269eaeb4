package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// badInputFiles are the inputs the bad-input suite refers to as {name}.
var badInputFiles = map[string]string{
	"dupcol.csv":  "submit_offset_s,workload_id,num_gpus,submit_offset_s\n0,mnist_bs32_1gpu,1,9\n",
	"longrow.csv": "submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n5,mnist_bs32_1gpu,1,extra\n",
	"badnum.csv":  "submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\nx,mnist_bs32_1gpu,1\n",
	"unknown.csv": "submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n5,resnet9000,1\n",
	"gpus.csv":    "submit_offset_s,workload_id,num_gpus\n0,resnet50_imagenet_bs64_1gpu,2\n",
	"empty.csv":   "",
	"nojobs.csv":  "submit_offset_s,workload_id,num_gpus\n",
	"legacy.csv":  "submit_offset_s,workload_id,num_gpus\n0,gpt2_xl_wiki_bs1_1gpu,1\n",
	"log.csv":     "job_id,submit_offset_s,num_gpus,duration_s,status\n1,0,1,60,Pass\n",
	"key.jsonl":   `{"submit_offset_s": 0, "workload_id": "mnist_bs32_1gpu", "num_gpus": 1, "gpus": 2}` + "\n",
	"bad.jsonl":   `{"submit_offset_s": 0, "workload_id": "mnist_bs32_1gpu", "num_gpus": 1` + "\n",
	"philly.json": `[{"status": "Pass", "jobid": "application_1", "attempts": [{"start_time": "2017-10-03 02:56:12",
 "end_time": "2017-10-03 03:15:29", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]}], "submitted_time": "2017-10-03 02:56:06"}]`,
	"helios.csv": "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n" +
		"1,u1,vcA,1,6,1,COMPLETED,2020-04-01 00:00:07,2020-04-01 00:00:08,2020-04-01 00:10:08,600,1\n",
	"helios-long.csv": "job_id,gpu_num,submit_time,duration\n1,1,2020-04-01 00:00:07,600\n2,1,2020-04-01 00:00:09,600,7\n",
	"gpu.yaml":        "name: rtx\nmemory_mib: 24564\npresure: true\n",
	"twice.jsonl":     `{"submit_offset_s": 0, "workload_id": "mnist_bs32_1gpu", "num_gpus": 1, "num_gpus": 2}` + "\n",
	"kind.jsonl":      `{"submit_offset_s": "0", "workload_id": "mnist_bs32_1gpu", "num_gpus": 1}` + "\n",
	"centuries.csv":   "submit_offset_s,workload_id,num_gpus,solo_s\n" + strings.Repeat("0,mnist_bs32_1gpu,1,1e9\n", 12),
	"out.txt":         "a file, not a directory",
	"tiny.yaml":       "name: tiny\nmemory_mib: 300\npressure: true\n",
	"tiny.csv":        "submit_offset_s,workload_id,num_gpus\n0,mnist_bs32_1gpu,1\n",
}

// bigPhilly is a Philly log whose one job asks for 2,000 GPUs.
func bigPhilly() string {
	gpus := make([]string, 2000)
	for i := range gpus {
		gpus[i] = `"gpu"`
	}
	return `[{"status": "Pass", "jobid": "application_1", "attempts": [{"start_time": "2017-10-03 02:56:12",
 "end_time": "2017-10-03 03:15:29", "detail": [{"ip": "m1", "gpus": [` + strings.Join(gpus, ",") + `]}]}],
 "submitted_time": "2017-10-03 02:56:06"}]`
}

// TestBadInput runs the command line on bad inputs across all commands: each
// must fail with the exit code (1 bad input, 2 bad usage) and a message that
// says what is wrong, never a panic, and create no file it was asked to
// write. {name} in an argument is a file of badInputFiles (or {dir}, the
// test's directory). The cases marked "issue 13" are the rows of issue 13's
// table.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	for name, body := range badInputFiles {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "philly2000.json"), []byte(bigPhilly()), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "badpolicy"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "badpolicy", "journal.jsonl"), []byte(`{"type":"run","t":0,"job":0,"run":{"start":"2026-01-01T00:00:00Z","settings":{"policy":"magic","emulate":"a100-40gb:2","speedup":"100","seed":"1","grace":"10s"},"jobs":0}}`+"\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "evjournal"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "evjournal", "journal.jsonl"), []byte(`{"t":0,"event":"arrived","job":0}`+"\n"), 0o644))
	sim := func(args ...string) []string { return append([]string{"simulate"}, args...) }
	noShared := map[string]string{"AEGIS_SHARED": filepath.Join(dir, "no-shared")}
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		code    int
		msg     string
		creates string // a path (under {dir}) that must not exist afterwards
		lines   int    // lines of error output, when more than 1
	}{
		// issue 13's table
		{name: "issue 13: gen --jobs 1e12", args: []string{"trace", "gen", "--like", "saturn", "--jobs", "1000000000000"}, code: 2, msg: "--jobs 1000000000000: want 1 to 1000000000"},
		{name: "issue 13: context_mib above the GPU", args: sim("--truth", "context_mib=50000"), code: 2, msg: `truth: parameter context_mib="50000": want at most the a100-40gb GPU's 40960 MiB`},
		{name: "issue 13: header names a column twice", args: sim("--trace", "{dupcol.csv}"), code: 1, msg: `dupcol.csv:1: header names column "submit_offset_s" twice (columns 1 and 4)`},
		{name: "issue 13: row longer than the header", args: sim("--trace", "{longrow.csv}"), code: 1, msg: "longrow.csv:3: row has 4 fields, the header 3"},
		{name: "issue 13: JSON Lines unknown key", args: sim("--trace", "{key.jsonl}"), code: 1, msg: `key.jsonl:1: unknown key "gpus"; valid keys: job_id, submit_offset_s, workload_id, num_gpus, solo_s`},
		{name: "issue 13: calibrate --gpu bogus", args: []string{"calibrate", "--gpu", "bogus", "--out", "{dir}/m.yaml"}, code: 2, msg: `--gpu: unknown GPU type "bogus"`, creates: "m.yaml"},
		{name: "issue 13: server with two colons", args: sim("--server", "a100-40gb:3:4"), code: 2, msg: `server "a100-40gb:3:4": want TYPE:COUNT with one colon`},
		{name: "issue 13: --truth without value", args: sim("--truth", "noise"), code: 2, msg: `--truth "noise": want key=value`},
		{name: "issue 13: Philly log as a trace", args: sim("--trace", "{philly.json}"), code: 1, msg: "philly.json is a Philly cluster_job_log, not a trace: cut a trace from it with aegis trace select --format philly"},
		{name: "issue 13: AEGIS_SHARED set but missing", args: []string{"calibrate"}, env: map[string]string{"AEGIS_SHARED": "/nonexistent"}, code: 2, msg: "AEGIS_SHARED=/nonexistent has no calibration/ folder", lines: 19 /* the explanation of the data (issue 13) */},
		{name: "issue 13: legacy workload not in catalog", args: sim("--trace", "{unknown.csv}", "--server", "legacy-11gb:8"), code: 1, msg: `"resnet9000" is not in the legacy-11gb catalog (see aegis workloads --gpu-type legacy-11gb)`},
		{name: "issue 13: Philly job of 2,000 GPUs", args: []string{"trace", "stats", "{philly2000.json}"}, code: 1, msg: "field attempts[0].detail: 2000 GPUs: more than 1024"},
		{name: "issue 13: simulate --out failing midway", args: sim("--trace", "{unknown.csv}", "--out", "{dir}/run/out"), code: 1, msg: `"resnet9000" is not in the a100-40gb catalog`, creates: "run"},

		// issue 25's remaining input cases
		{name: "issue 25: --memprofile into a missing directory", args: sim("--memprofile", "{dir}/nodir/mem.prof", "--out", "{dir}/memrun"), code: 1, msg: "--memprofile: open", creates: "memrun"},
		{name: "issue 25: a journal that is an events.jsonl", args: []string{"exec", "--resume", "{dir}/evjournal"}, code: 1, msg: "journal.jsonl:1: this is a run's event log (events.jsonl: aegis simulate and aegis exec write it), not an executor journal", creates: "evjournal/lock"},
		{name: "issue 25: a journal whose policy was edited", args: []string{"exec", "--resume", "{dir}/badpolicy"}, code: 1, msg: `journal.jsonl:1: the run's journaled settings: unknown policy "magic"`},
		{name: "issue 25: a GPU type below the default CUDA context", args: sim("--trace", "{tiny.csv}", "--server", "{tiny.yaml}:2"), code: 2, msg: `truth: parameter context_mib="500": want at most the tiny GPU's 300 MiB (500 is the default): set a smaller CUDA context with --truth context_mib=N`},
		{name: "issue 25: trace gen --out onto a directory", args: []string{"trace", "gen", "--like", "philly", "--jobs", "5", "--out", "{dir}"}, code: 1, msg: ": is a directory, not a file"},
		{name: "issue 25: --resume of a directory without a run", args: []string{"exec", "--resume", "{dir}/norun"}, code: 1, msg: "norun: no run to resume (no journal.jsonl there; start one with aegis exec --out", creates: "norun"},

		// simulate: flags and parameters
		{name: "unknown flag", args: sim("--nope"), code: 2, msg: "unknown flag: --nope"},
		{name: "stray argument", args: sim("demo"), code: 2, msg: "aegis simulate: accepts 0 arg(s), received 1"},
		{name: "server without count", args: sim("--server", "a100-40gb"), code: 2, msg: "want TYPE:COUNT"},
		{name: "unknown GPU type", args: sim("--server", "v100:2"), code: 2, msg: `unknown GPU type "v100"`},
		{name: "zero GPUs", args: sim("--server", "a100-40gb:0"), code: 2, msg: `GPU count "0" is not a whole number in 1..1024`},
		{name: "too many GPUs", args: sim("--server", "a100-40gb:2000"), code: 2, msg: `GPU count "2000"`},
		{name: "GPU count text", args: sim("--server", "a100-40gb:x"), code: 2, msg: `GPU count "x"`},
		{name: "GPU type file with unknown key", args: sim("--server", "{gpu.yaml}:2"), code: 1, msg: `gpu.yaml:3: unknown key "presure"`},
		{name: "GPU type file missing", args: sim("--server", "{dir}/none.yaml:2"), code: 1, msg: "none.yaml"},
		{name: "unknown policy", args: sim("--policy", "magic"), code: 2, msg: `unknown policy "magic"`},
		{name: "unknown parameter", args: sim("--set", "hold=3"), code: 2, msg: `unknown parameter "hold"`},
		{name: "set without value", args: sim("--set", "hold"), code: 2, msg: `--set "hold": want key=value`},
		{name: "set key twice", args: sim("--policy", "aegis", "--set", "hold=1s", "--set", "hold=2s"), code: 2, msg: `key "hold" given twice`},
		{name: "negative hold", args: sim("--policy", "aegis", "--set", "hold=-1s"), code: 2, msg: `parameter hold="-1s"`},
		{name: "zero tick", args: sim("--policy", "aegis", "--set", "tick=0"), code: 2, msg: `parameter tick="0"`},
		{name: "tick off the grid", args: sim("--policy", "horus", "--set", "tick=2h"), code: 2, msg: `parameter tick="2h"`},
		{name: "lookahead zero", args: sim("--policy", "lucid", "--set", "lookahead=0"), code: 2, msg: `parameter lookahead="0"`},
		{name: "unknown recovery", args: sim("--policy", "aegis", "--set", "recovery=retry"), code: 2, msg: "one of exclusive, ladder"},
		{name: "two thresholds", args: sim("--policy", "aegis", "--set", "thresholds=0.5,0.5"), code: 2, msg: "3 comma-separated numbers"},
		{name: "threshold above 1", args: sim("--policy", "aegis", "--set", "thresholds=0.5,0.5,2"), code: 2, msg: "in [0, 1]"},
		{name: "util filter NaN", args: sim("--policy", "aegis", "--set", "filter=util:NaN"), code: 2, msg: "want util:<pct> with pct in (0, 100]"},
		{name: "unknown filter", args: sim("--policy", "aegis", "--set", "filter=magic"), code: 2, msg: "want pressure, nf, mem-only or util:<pct>"},
		{name: "unknown placement", args: sim("--policy", "aegis", "--set", "placement=best"), code: 2, msg: "one of mfm, mu, rr"},
		{name: "unknown memory input", args: sim("--policy", "aegis", "--set", "memory=guess"), code: 2, msg: `parameter memory="guess"`},
		{name: "window zero", args: sim("--policy", "aegis", "--set", "window=0"), code: 2, msg: `parameter window="0"`},
		{name: "horus variant", args: sim("--policy", "horus", "--set", "variant=new"), code: 2, msg: "one of paper, original"},
		{name: "lucid negative guard", args: sim("--policy", "lucid", "--set", "guard_mib=-5"), code: 2, msg: `parameter guard_mib="-5"`},
		{name: "exclusive takes no parameters", args: sim("--policy", "exclusive", "--set", "tick=1s"), code: 2, msg: `exclusive: unknown parameter "tick"; valid: none`},
		{name: "pressure filter without DCGM", args: sim("--server", "legacy-11gb:8", "--policy", "aegis"), code: 2, msg: "filter=mem-only"},
		{name: "unknown truth key", args: sim("--truth", "bogus=1"), code: 2, msg: `truth: unknown parameter "bogus"`},
		{name: "peak jitter 1", args: sim("--truth", "peak_jitter=1"), code: 2, msg: `parameter peak_jitter="1"`},
		{name: "negative ramp", args: sim("--truth", "ramp=-1s"), code: 2, msg: `parameter ramp="-1s"`},
		{name: "noise NaN", args: sim("--truth", "noise=NaN"), code: 2, msg: `parameter noise="NaN"`},
		{name: "seed text", args: sim("--seed", "x"), code: 2, msg: `invalid argument "x" for "--seed"`},

		// simulate: traces and outputs
		{name: "missing trace", args: sim("--trace", "{dir}/none.csv"), code: 1, msg: "is neither a built-in (demo, philly, saturn, venus, legacy-philly, legacy-saturn, legacy-venus) nor a readable file"},
		{name: "empty trace", args: sim("--trace", "{empty.csv}"), code: 1, msg: "empty trace: want a header with submit_offset_s,workload_id,num_gpus"},
		{name: "trace without jobs", args: sim("--trace", "{nojobs.csv}"), code: 1, msg: "no jobs"},
		{name: "bad number", args: sim("--trace", "{badnum.csv}"), code: 1, msg: "badnum.csv:3: column submit_offset_s"},
		{name: "unknown workload", args: sim("--trace", "{unknown.csv}"), code: 1, msg: `unknown.csv:3: job 1: column workload_id: "resnet9000" is not in the a100-40gb catalog (see aegis workloads)`},
		{name: "GPU count disagrees with workload", args: sim("--trace", "{gpus.csv}"), code: 1, msg: "gpus.csv:2: job 0: column num_gpus: 2, but workload resnet50_imagenet_bs64_1gpu needs 1"},
		{name: "A100 workload on the legacy server", args: sim("--trace", "{legacy.csv}", "--server", "legacy-11gb:8"), code: 1, msg: "is not in the legacy-11gb catalog"},
		{name: "server too small", args: sim("--server", "a100-40gb:1"), code: 1, msg: "the server a100-40gb:1 has 1"},
		{name: "JSON Lines syntax", args: sim("--trace", "{bad.jsonl}"), code: 1, msg: "bad.jsonl:1: unexpected EOF"},
		{name: "Helios log as a trace", args: sim("--trace", "{helios.csv}"), code: 1, msg: "helios.csv is a Helios cluster log, not a trace: cut a trace from it with aegis trace select --format helios"},
		{name: "job log as a trace", args: sim("--trace", "{log.csv}"), code: 1, msg: "is a job log without workloads (duration_s, no workload_id), not a trace: map it onto the catalog with aegis trace map"},
		{name: "out is a file", args: sim("--out", "{out.txt}"), code: 1, msg: "out.txt exists and is not a directory"},

		// workloads
		{name: "workloads stray word", args: []string{"workloads", "x"}, code: 2, msg: `unknown subcommand "x" (have show)`},
		{name: "workloads unknown GPU type", args: []string{"workloads", "--gpu-type", "v100"}, code: 2, msg: `--gpu-type: unknown GPU type "v100"`},
		{name: "workloads GPU type file with unknown key", args: []string{"workloads", "--gpu-type", "{gpu.yaml}"}, code: 1, msg: `gpu.yaml:3: unknown key "presure"`},
		{name: "show without id", args: []string{"workloads", "show"}, code: 2, msg: "aegis workloads show: accepts 1 arg(s), received 0"},
		{name: "show unknown id", args: []string{"workloads", "show", "resnet9000"}, code: 1, msg: `workload "resnet9000" is not in the a100-40gb catalog (see aegis workloads)`},
		{name: "show unknown legacy id", args: []string{"workloads", "show", "resnet9000", "--gpu-type", "legacy-11gb"}, code: 1, msg: "(see aegis workloads --gpu-type legacy-11gb)"},
		{name: "show unknown GPU type", args: []string{"workloads", "show", "mnist_bs32_1gpu", "--gpu-type", "v100"}, code: 2, msg: `--gpu-type: unknown GPU type "v100"`},

		// calibrate
		{name: "calibrate one fold", args: []string{"calibrate", "--folds", "1"}, code: 2, msg: "--folds 1: want 2..50"},
		{name: "calibrate N-way exponent 0", args: []string{"calibrate", "--nway-exponent", "0"}, code: 2, msg: "--nway-exponent 0: want a number in (0, 10]"},
		// (without the shared data folder, as on a fresh clone: the files
		// given are read before the stacking data are looked for)
		{name: "calibrate missing pairs", args: []string{"calibrate", "--pairs", "{dir}/none.csv", "--catalog", "../../models/data/catalog_a100.csv"}, env: noShared, code: 1, msg: "none.csv: no such file"},
		{name: "calibrate missing catalog", args: []string{"calibrate", "--pairs", "{dir}/none.csv", "--catalog", "{dir}/nocat.csv"}, env: noShared, code: 1, msg: "nocat.csv"},
		{name: "calibrate pairs of the wrong kind", args: []string{"calibrate", "--pairs", "{helios.csv}", "--catalog", "../../models/data/catalog_a100.csv"}, env: noShared, code: 1, msg: "helios.csv"},

		// trace
		{name: "trace stray word", args: []string{"trace", "x"}, code: 2, msg: `unknown subcommand "x" (have gen, map, select, stats)`},
		{name: "gen without --like", args: []string{"trace", "gen"}, code: 2, msg: `--like "": want one of philly, saturn, venus`},
		{name: "gen unknown --like", args: []string{"trace", "gen", "--like", "mars"}, code: 2, msg: `--like "mars"`},
		{name: "gen zero jobs", args: []string{"trace", "gen", "--like", "venus", "--jobs", "0"}, code: 2, msg: "--jobs 0: want 1 to 1000000000"},
		{name: "gen negative jobs", args: []string{"trace", "gen", "--like", "venus", "--jobs", "-5"}, code: 2, msg: "--jobs -5"},
		{name: "gen max GPUs 3", args: []string{"trace", "gen", "--like", "venus", "--max-gpus", "3"}, code: 2, msg: "--max-gpus 3: want 2, 4, 8, 16, 32 or 64"},
		{name: "gen unwritable output", args: []string{"trace", "gen", "--like", "venus", "--out", "{dir}/no/such/g.csv"}, code: 1, msg: "g.csv: no such file or directory"},
		{name: "stats unknown --like", args: []string{"trace", "stats", "--like", "mars", "philly"}, code: 2, msg: `--like "mars"`},
		{name: "stats without a file", args: []string{"trace", "stats"}, code: 2, msg: "accepts 1 arg(s), received 0"},
		{name: "stats JSON Lines unknown key", args: []string{"trace", "stats", "{key.jsonl}"}, code: 1, msg: `unknown key "gpus"`},
		{name: "select window of 1", args: []string{"trace", "select", "--input", "philly", "--jobs", "1"}, code: 2, msg: "--jobs 1: want at least 2"},
		{name: "select unknown format", args: []string{"trace", "select", "--format", "bogus", "--input", "philly"}, code: 2, msg: `--format "bogus"`},
		{name: "select missing input", args: []string{"trace", "select", "--input", "{dir}/none.csv"}, code: 1, msg: "none.csv: no such file"},
		{name: "select Helios row too long", args: []string{"trace", "select", "--input", "{helios-long.csv}"}, code: 1, msg: "helios-long.csv:3: row has 5 fields, the header 4"},
		{name: "select header names a column twice", args: []string{"trace", "select", "--input", "{dupcol.csv}"}, code: 1, msg: `header names column "submit_offset_s" twice`},
		{name: "select bad --min-per-gpu", args: []string{"trace", "select", "--input", "philly", "--min-per-gpu", "2:x"}, code: 2, msg: "--min-per-gpu"},
		{name: "select negative --max-gpu-mix", args: []string{"trace", "select", "--input", "philly", "--max-gpu-mix", "-1"}, code: 2, msg: "--max-gpu-mix -1: want a distance of at least 0"},
		{name: "map without input", args: []string{"trace", "map"}, code: 2, msg: "--input is required"},
		{name: "map unknown GPU type", args: []string{"trace", "map", "--input", "philly", "--gpu-type", "v100"}, code: 2, msg: "--gpu-type"},
		{name: "unknown command", args: []string{"simulat"}, code: 2, msg: `unknown command "simulat"`, lines: 5},

		// policies
		{name: "policies unknown policy", args: []string{"policies", "magic"}, code: 2, msg: `unknown policy "magic" (known: aegis, bestfit, exclusive, external, horus, lucid)`},
		{name: "policies two policies", args: []string{"policies", "aegis", "horus"}, code: 2, msg: "aegis policies: want at most one policy, got 2 arguments"},

		// experiments and plots (commands of the experiments engineers)
		{name: "run without spec", args: []string{"run"}, code: 2, msg: "aegis run: give at least one spec file"},
		{name: "run without --out", args: []string{"run", "{gpu.yaml}"}, code: 2, msg: "--out DIR is required"},
		{name: "run a GPU type file as a spec", args: []string{"run", "--out", "{dir}/res", "{gpu.yaml}"}, code: 1, msg: `gpu.yaml:2: unknown key "memory_mib"; valid keys: name,`, lines: 2, creates: "res"},
		{name: "validate missing spec", args: []string{"validate", "{dir}/none.yaml"}, code: 1, msg: "none.yaml: no such file"},
		{name: "validate a GPU type file", args: []string{"validate", "{gpu.yaml}"}, code: 1, msg: `gpu.yaml:2: unknown key "memory_mib"`, lines: 2},
		{name: "merge without shards", args: []string{"merge"}, code: 2, msg: "aegis merge: give the shard directories"},
		{name: "plot without a folder", args: []string{"plot"}, code: 2, msg: "aegis plot: give at least one results directory"},
		{name: "plot a folder without results", args: []string{"plot", "{dir}"}, code: 1, msg: "nothing to plot"},
		{name: "plot format gif", args: []string{"plot", "--format", "gif", "{dir}"}, code: 2, msg: `plot format "gif": want one of svg, png`},
		// issue 17: bounded reads, overflow, JSON Lines, messages
		{name: "issue 17: validate /dev/zero", args: []string{"validate", "/dev/zero"}, code: 1, msg: "/dev/zero: larger than 64 MiB, the limit of a spec file"},
		{name: "issue 17: trace stats /dev/zero", args: []string{"trace", "stats", "/dev/zero"}, code: 1, msg: "/dev/zero: line 1 is longer than 1048576 bytes, the limit of one line"},
		{name: "issue 17: simulate --trace /dev/zero", args: sim("--trace", "/dev/zero"), code: 1, msg: "/dev/zero: line 1 is longer than 1048576 bytes, the limit of one line"},
		{name: "issue 17: 12 jobs of 1e9 s on one GPU", args: sim("--trace", "{centuries.csv}", "--server", "a100-40gb:1"), code: 1, msg: "would finish after 250 years of simulated time, the simulator's limit (it counts int64 nanoseconds)"},
		{name: "issue 17: exec --speedup 1e12", args: []string{"exec", "--emulate", "a100-40gb:3", "--trace", "demo", "--speedup", "1e12", "--out", "{dir}/e"}, code: 2, msg: "--speedup 1e+12: want a number from 1 to 10000", creates: "e"},
		{name: "issue 17: exec --emulate --telemetry bogus", args: []string{"exec", "--emulate", "a100-40gb:3", "--trace", "demo", "--telemetry", "bogus", "--out", "{dir}/e"}, code: 2, msg: "--telemetry and --mps-pipe-dir do not apply", creates: "e"},
		{name: "issue 17: JSON Lines key twice", args: sim("--trace", "{twice.jsonl}"), code: 1, msg: `twice.jsonl:1: key "num_gpus" given twice`},
		{name: "issue 17: JSON Lines kind in the file's terms", args: sim("--trace", "{kind.jsonl}"), code: 1, msg: "kind.jsonl:1: field submit_offset_s: want a number, got a JSON string"},
		{name: "issue 17: a huge value is cut in the message", args: sim("--policy", "aegis", "--set", "hold="+strings.Repeat("x", 100_000)), code: 2, msg: `parameter hold="xxxx`},
		{name: "issue 17: misspelled flag", args: sim("--polcy", "aegis"), code: 2, msg: "unknown flag: --polcy (did you mean --policy?)"},
		{name: "issue 17: misspelled parameter, one prefix", args: sim("--policy", "aegis", "--set", "hodl=1s"), code: 2, msg: `aegis: policy aegis: unknown parameter "hodl" (did you mean hold?)`},
		{name: "issue 17: trace map of a trace", args: []string{"trace", "map", "--input", "philly"}, code: 1, msg: "map philly: its jobs already name workloads (it is a trace, or mapped): give --remap"},
		{name: "gpus unknown telemetry", args: []string{"gpus", "--telemetry", "bogus"}, code: 1, msg: `unknown telemetry "bogus" (want auto, nvml, dcgm, util)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := make([]string, len(tc.args))
			for i, a := range tc.args {
				a = strings.ReplaceAll(a, "{dir}", dir)
				for name := range badInputFiles {
					a = strings.ReplaceAll(a, "{"+name+"}", filepath.Join(dir, name))
				}
				args[i] = strings.ReplaceAll(a, "{philly2000.json}", filepath.Join(dir, "philly2000.json"))
			}
			code, _, errs := aegis(args...)
			require.Equal(t, tc.code, code, errs)
			require.Contains(t, errs, tc.msg)
			require.NotContains(t, errs, "goroutine")
			require.NotContains(t, errs, "aegis: aegis:")
			require.Less(t, len(errs), 5000, "a message echoes no input whole")
			require.Equal(t, max(1, tc.lines), strings.Count(errs, "\n"), "lines of error: %s", errs)
			if tc.creates != "" {
				require.NoFileExists(t, filepath.Join(dir, tc.creates))
				require.NoDirExists(t, filepath.Join(dir, tc.creates))
			}
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, len(badInputFiles)+3, "a failed command left files behind (the files, philly2000.json, badpolicy/ and evjournal/)")
		})
	}
}

// A mistyped trace or policy name is answered with the name meant, as a
// mistyped flag or command is.
func TestSuggestsNames(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--trace", "phily"}, `trace "phily" (did you mean philly?) is neither a built-in`},
		{[]string{"simulate", "--policy", "aegiss"}, `unknown policy "aegiss" (did you mean aegis?)`},
		{[]string{"run", "--trace", "philly", "--policy", "lucd", "--out", t.TempDir()}, `unknown policy "lucd" (did you mean lucid?)`},
	} {
		code, _, errs := aegis(tc.args...)
		require.NotZero(t, code, "%v", tc.args)
		require.Contains(t, errs, tc.want, "%v", tc.args)
	}
}

// The values of --trace, --policy, --server, --figure and --format
// complete in the shell (cobra's __complete, what the completion scripts
// call), the last item of a comma-separated list too; the internal
// fake-train command is not listed.
func TestCompletesValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "simulate", "--trace", "ph"}, "philly\n:0\n"},
		{[]string{"__complete", "simulate", "--policy", "lu"}, "lucid\n:4\n"},
		{[]string{"__complete", "run", "--policy", "aegis,ho"}, "aegis,horus\n:4\n"},
		{[]string{"__complete", "exec", "--policy", "exc"}, "exclusive\n:4\n"},
		{[]string{"__complete", "simulate", "--server", "h2"}, "h200-141gb:\n:6\n"},
		{[]string{"__complete", "plot", "d", "--figure", "seeds"}, "seeds-cdf\n:4\n"},
		{[]string{"__complete", "plot", "d", "--format", "p"}, "png\npdf\n:4\n"},
	} {
		code, out, errs := aegis(tc.args...)
		require.Equal(t, 0, code, errs)
		require.Equal(t, tc.want, out, "%v", tc.args)
	}
	_, out, _ := aegis("--help")
	require.NotContains(t, out, "fake-train")
	require.Contains(t, out, "completion")
}
